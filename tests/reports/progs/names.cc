#include <string>
#include <vector>
#include <cstdio>
struct Walker { std::vector<int> v; int Iterate(int k) const { int s=0; for (int x : v) s += x*k; return s; } };
static std::string make(){ return std::string("hello world, a long string to avoid sso") + "!"; }
struct Init { Init() { std::printf("init\n"); } } init_obj;
template <typename T> T twice(T x) { return x + x; }
int main(){ Walker w; w.v = {1,2,3}; std::string s = make(); std::printf("%d %zu %d %g\n", w.Iterate(2), s.size(), twice(3), twice(2.5)); }
