/* preinit's instrumented shared library: a constructor and a function. */
static volatile long lsink;
static void lib_ctor_work(void) { lsink++; }
__attribute__((constructor)) static void lib_ctor(void) { lib_ctor_work(); }
void lib_value(void) { lsink++; }
