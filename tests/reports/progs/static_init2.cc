// Only internal definitions: the initialiser is keyed to the file name.
#include <cstdio>
namespace
{
struct Quiet {
    Quiet() { std::printf("second\n"); }
};
Quiet second_obj;
} // namespace
