/*
 * sqlite_driver: the real-code workload of `make bench`.
 *
 * Drives the SQLite amalgamation (fetched at bench time, never committed:
 * see bench/suite/sqlite.py) through an ordinary OLTP-then-reporting
 * session on an in-memory database:
 *   1. create two tables (customers, orders);
 *   2. insert rows with prepared statements, in transactions of 1000;
 *   3. build two indexes;
 *   4. reporting queries: a join with grouping and sorting, aggregates over
 *      day ranges through the index, a top-N of a grouped subquery, point
 *      lookups by primary key;
 *   5. updates and deletes through the indexes, then the join again.
 * The data come from a fixed-seed generator, so every run makes the same
 * calls; bench/run counts them once (they are not known in advance) and
 * the checksum of all results shows that every build computed the same.
 *
 * Prints one line
 *     ns=<wall ns> cpu_ns=<process CPU ns> checksum=<hex> end_cpu_ns=<..> end_ns=<..>
 * of the whole session (steps 1-5); end_cpu_ns and end_ns as in recurse.c.
 *
 * Usage: sqlite_driver [orders]   (default 32000: ~23 million calls; customers = orders / 20)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sqlite3.h"

#define NOINSTR __attribute__((no_instrument_function))

static sqlite3 *db;
static uint64_t checksum = 1469598103934665603ULL;   /* FNV-1a offset basis */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

NOINSTR static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint32_t rnd(uint32_t below)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % below);
}

static void die(const char *what)
{
    fprintf(stderr, "sqlite_driver: %s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
}

static void exec_sql(const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "sqlite_driver: %s: %s\n", sql, err ? err : "?");
        exit(1);
    }
}

static sqlite3_stmt *prepare(const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        die(sql);
    return st;
}

/* Folds every column of every result row into the checksum. */
static void fold_row(sqlite3_stmt *st)
{
    for (int i = 0; i < sqlite3_column_count(st); i++) {
        const unsigned char *text = sqlite3_column_text(st, i);
        for (; text && *text; text++)
            checksum = (checksum ^ *text) * 1099511628211ULL;
    }
}

static void run_query(sqlite3_stmt *st)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        fold_row(st);
    if (rc != SQLITE_DONE)
        die("step");
    sqlite3_reset(st);
}

static const char *const cities[] = {
    "Aachen", "Bergen", "Cork", "Dijon", "Essen", "Faro", "Graz", "Hull",
    "Ivrea", "Jena", "Kiel", "Lyon", "Mainz", "Nantes", "Oslo", "Porto",
};
static const char *const items[] = {
    "anvil", "bolt", "cable", "drill", "easel", "fuse", "gear", "hinge",
    "ink", "jack", "knob", "lamp", "magnet", "nail", "oar", "pulley",
    "quill", "rivet", "spring", "tape", "valve", "washer", "yoke", "zip",
};
#define COUNT(a) (int)(sizeof(a) / sizeof(a)[0])

static void create_schema(void)
{
    exec_sql("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, city TEXT, score REAL)");
    exec_sql("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, item TEXT,"
             " qty INTEGER, price REAL, day INTEGER)");
}

static void insert_customers(int n)
{
    sqlite3_stmt *st = prepare("INSERT INTO customers VALUES(?1, ?2, ?3, ?4)");
    char name[32];
    exec_sql("BEGIN");
    for (int i = 1; i <= n; i++) {
        snprintf(name, sizeof name, "customer-%d", rnd(1000000));
        sqlite3_bind_int(st, 1, i);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, cities[rnd(COUNT(cities))], -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 4, rnd(10000) / 100.0);
        if (sqlite3_step(st) != SQLITE_DONE)
            die("insert customer");
        sqlite3_reset(st);
    }
    exec_sql("COMMIT");
    sqlite3_finalize(st);
}

static void insert_orders(int n, int customers)
{
    sqlite3_stmt *st = prepare("INSERT INTO orders(customer, item, qty, price, day)"
                               " VALUES(?1, ?2, ?3, ?4, ?5)");
    for (int i = 0; i < n; i++) {
        if (i % 1000 == 0)
            exec_sql(i ? "COMMIT; BEGIN" : "BEGIN");
        sqlite3_bind_int(st, 1, 1 + (int)rnd((uint32_t)customers));
        sqlite3_bind_text(st, 2, items[rnd(COUNT(items))], -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, 1 + (int)rnd(50));
        sqlite3_bind_double(st, 4, 1 + rnd(100000) / 100.0);
        sqlite3_bind_int(st, 5, (int)rnd(365));
        if (sqlite3_step(st) != SQLITE_DONE)
            die("insert order");
        sqlite3_reset(st);
    }
    exec_sql("COMMIT");
    sqlite3_finalize(st);
}

static void report_queries(int customers)
{
    sqlite3_stmt *by_city = prepare(
        "SELECT c.city, count(*), round(sum(o.qty * o.price), 2) FROM orders o"
        " JOIN customers c ON c.id = o.customer GROUP BY c.city ORDER BY 3 DESC");
    sqlite3_stmt *by_days = prepare(
        "SELECT item, count(*), round(avg(price), 2), max(qty) FROM orders"
        " WHERE day BETWEEN ?1 AND ?2 GROUP BY item ORDER BY item");
    sqlite3_stmt *top = prepare(
        "SELECT name, total FROM (SELECT customer, sum(qty) AS total FROM orders"
        " GROUP BY customer) JOIN customers ON id = customer ORDER BY total DESC, name LIMIT 10");
    sqlite3_stmt *lookup = prepare(
        "SELECT c.name, count(o.id) FROM customers c LEFT JOIN orders o ON o.customer = c.id"
        " WHERE c.id = ?1 GROUP BY c.id");
    run_query(by_city);
    for (int d = 0; d < 365; d += 30) {
        sqlite3_bind_int(by_days, 1, d);
        sqlite3_bind_int(by_days, 2, d + 29);
        run_query(by_days);
    }
    run_query(top);
    for (int i = 0; i < customers; i += 7) {
        sqlite3_bind_int(lookup, 1, 1 + (int)rnd((uint32_t)customers));
        run_query(lookup);
    }
    sqlite3_finalize(by_city);
    sqlite3_finalize(by_days);
    sqlite3_finalize(top);
    sqlite3_finalize(lookup);
}

static void change_data(void)
{
    exec_sql("BEGIN");
    exec_sql("UPDATE orders SET price = price * 1.1 WHERE item IN ('bolt', 'gear', 'nail')");
    exec_sql("DELETE FROM orders WHERE day BETWEEN 100 AND 130");
    exec_sql("UPDATE customers SET score = score + 1 WHERE city = 'Oslo'");
    exec_sql("COMMIT");
    sqlite3_stmt *by_city = prepare(
        "SELECT c.city, count(*), round(sum(o.qty * o.price), 2) FROM orders o"
        " JOIN customers c ON c.id = o.customer GROUP BY c.city ORDER BY c.city");
    run_query(by_city);
    sqlite3_finalize(by_city);
}

static void session(int orders)
{
    int customers = orders / 20 > 0 ? orders / 20 : 1;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        die("open");
    create_schema();
    insert_customers(customers);
    insert_orders(orders, customers);
    exec_sql("CREATE INDEX orders_customer ON orders(customer)");
    exec_sql("CREATE INDEX orders_day ON orders(day, item)");
    report_queries(customers);
    change_data();
    sqlite3_close(db);
}

int main(int argc, char **argv)
{
    int orders = argc > 1 ? atoi(argv[1]) : 32000;
    long long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    session(orders);
    long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = now_ns(CLOCK_MONOTONIC);
    printf("ns=%lld cpu_ns=%lld checksum=%016llx", t1 - t0, c1 - c0, (unsigned long long)checksum);
    printf(" end_cpu_ns=%lld", now_ns(CLOCK_PROCESS_CPUTIME_ID));
    printf(" end_ns=%lld\n", now_ns(CLOCK_MONOTONIC));
    fflush(stdout);
    return 0;
}
