// C++ names a profile of any threaded STL program holds (tests/reports/
// test_cxx_names.py): std::thread's wrappers around a thread's function, a
// local class in a function with parameters, a lambda, an operator
// template (__gnu_cxx::operator< on vector iterators).
#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

struct Point { int x, y; };

static int find_in(const std::vector<int> &v, int key, const std::string &label)
{
    struct State {
        int key;
        bool Match(int x) const { return x == key; }
    } st{key};
    int n = 0;
    for (int x : v)
        n += st.Match(x);
    return n + (int)label.size();
}

static void work(std::vector<Point> *pts)
{
    std::sort(pts->begin(), pts->end(), [](const Point &a, const Point &b) { return a.x < b.x; });
    for (auto it = pts->begin(); it < pts->end(); ++it)
        it->y++;
}

int main()
{
    std::vector<Point> pts;
    for (int i = 0; i < 100; i++)
        pts.push_back({(i * 37) % 101, i});
    std::thread t(work, &pts);
    t.join();
    std::vector<int> v{1, 2, 3, 2};
    printf("%d\n", find_in(v, 2, "two"));
}
