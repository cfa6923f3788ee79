/* A second JNI library (class Later in App.java), loaded after libNative. */
#include <jni.h>

static int twice(int x) { return 2 * x; }

JNIEXPORT jint JNICALL Java_Later_compute(JNIEnv *env, jclass cls, jint x)
{
    return twice(x);
}
