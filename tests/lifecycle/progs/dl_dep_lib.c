extern int lib_value(int);
int dep_value(int x) { return lib_value(x) + 1; }
