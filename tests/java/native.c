/* The JNI library of App.java, built with -finstrument-functions. */
#include <jni.h>

static int kernel(int x) { return x * 2; }
static int helper(int x) { return kernel(x) + kernel(x + 1); }

JNIEXPORT jint JNICALL Java_Worker_compute(JNIEnv *env, jobject self, jint x)
{
    return helper(x);
}

JNIEXPORT jint JNICALL Java_Worker_bounce(JNIEnv *env, jobject self, jint x)
{
    jclass cls = (*env)->GetObjectClass(env, self);
    jmethodID up = (*env)->GetMethodID(env, cls, "up", "(I)I");
    return (*env)->CallIntMethod(env, self, up, helper(x));
}
