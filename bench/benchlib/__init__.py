"""The pieces of `make bench` (bench/run): settings, measuring one run,
the workloads (recursive microbenchmark, threads, SQLite), the tables."""
