// Two instantiations of one template whose names differ only inside their
// template arguments: the simple form must tell them apart without
// printing the full, 200-character names.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

template <class T> struct Tag {
};

template <class T> __attribute__((noinline)) int pick(Tag<T> *)
{
    return (int)sizeof(T);
}

int main()
{
    int a = pick<std::map<std::string, int>>(nullptr);
    int b = pick<std::vector<std::string>>(nullptr);
    std::printf("%d\n", a > 0 && b > 0);
    return 0;
}
