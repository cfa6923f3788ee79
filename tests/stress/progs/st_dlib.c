/* One of the libraries st_dlopen loads: built NLIBS times with -DLIB=i. */
__attribute__((noinline)) static long lib_leaf(long x) { return x + LIB; }
long lib_fn(long x) { return lib_leaf(x) * 2; }
