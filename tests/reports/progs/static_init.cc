// Static initialisers for tests/reports/test_names.py: GCC keys this
// file's to its first global definition (keyed_obj), the other file's to
// the file name; clang keys both to the file name.
#include <cstdio>
struct Noisy {
    explicit Noisy(const char *s) { std::printf("%s\n", s); }
};
Noisy keyed_obj("keyed");
int main()
{
    std::printf("main\n");
    return 0;
}
