"""The quick subset of the conformance corpus (docs/conformance.md), in make
check: the small programs with gcc and clang at -O0 and -O2, and Lua at
gcc -O2.  One test per case; a mismatch with the reference fails, with the
first differing paths.  `make conformance` runs the whole corpus."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
import hk  # noqa: E402

NOT_UNDER = {s: "the reference run preloads refstack.so, not the sanitizer's runtime; "
                "make conformance checks the plain build"
             for s in ("address", "undefined", "thread", "memory", "leak")}


def _make(case, comp, opt):
    def test(tmp):
        status, line, detail = cases.run_case(case, comp, opt, quick=True)
        if status == "SKIP":
            hk.skip(line)
        if status != "PASS":
            raise AssertionError("\n    ".join([line] + detail))
    return test


for _case, _comp, _opt in cases.select(quick=True):
    _name = f"test_{_case.name}_{_comp}_{_opt}".replace("-", "_").replace("__", "_")
    globals()[_name] = _make(_case, _comp, _opt)
