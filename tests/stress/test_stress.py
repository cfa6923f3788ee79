"""`make stress`: the full-size stress scenarios of issue 10 (tests/lib/stress.py
says what each checks).  Figures go to $BUILD/stress-figures.jsonl."""
import stress


def test_threads_1000_alive_100000_short(tmp):
    stress.record("threads", stress.threads(tmp, 1000, 100000))


def test_recursion_1000000_deep(tmp):
    stress.record("recursion", stress.recursion(tmp, 1000000))


def test_fork_tree_200_processes(tmp):
    stress.record("fork_tree", stress.fork_tree(tmp, 20, 9))


def test_signals_100000_per_second(tmp):
    stress.record("signals", stress.signals(tmp, 10, min_rate=100000))


def test_exceptions_through_100000_frames(tmp):
    stress.record("exceptions", stress.exceptions(tmp, 100000, 20))


def test_longjmp_out_of_deep_stacks(tmp):
    stress.record("longjmp", stress.longjmps(tmp, 100000, 100))


def test_dlopen_50_libraries_2_threads_30s(tmp):
    stress.record("dlopen", stress.dlopen(tmp, 50, 30))


def test_ten_minutes_steady_memory(tmp):
    stress.record("long_run", stress.long_run(tmp, 600, max_growth_kb=4096))
