/*
 * sqlite_work: the SQLite workload of the conformance corpus (an in-memory
 * database: a table, an index, inserts in a transaction, a join, an
 * aggregate, an update, a delete).  Deterministic.
 */
#include <stdio.h>
#include <sqlite3.h>

static int rows;

static int count_row(void *arg, int n, char **vals, char **names)
{
    rows++;
    return 0;
}

static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, count_row, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "sqlite: %s\n", err);
        sqlite3_free(err);
    }
}

int main(void)
{
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        return 1;
    exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
             "CREATE TABLE g(k INTEGER PRIMARY KEY, name TEXT);"
             "CREATE INDEX tk ON t(k);");
    exec(db, "BEGIN");
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO t(k, v) VALUES(?, ?)", -1, &st, NULL);
    for (int i = 0; i < 2000; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "value-%d", (i * 7919) % 1000);
        sqlite3_bind_int(st, 1, i % 37);
        sqlite3_bind_text(st, 2, buf, -1, SQLITE_TRANSIENT);
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    for (int k = 0; k < 37; k++) {
        char sql[96];
        snprintf(sql, sizeof sql, "INSERT INTO g VALUES(%d, 'group %d')", k, k);
        exec(db, sql);
    }
    exec(db, "COMMIT");
    exec(db, "SELECT g.name, count(*), max(t.v) FROM t JOIN g ON t.k = g.k GROUP BY g.k ORDER BY 2 DESC");
    exec(db, "UPDATE t SET v = upper(v) WHERE k % 3 = 0");
    exec(db, "DELETE FROM t WHERE id % 5 = 0");
    exec(db, "SELECT k, sum(length(v)) FROM t WHERE k BETWEEN 5 AND 20 GROUP BY k");
    sqlite3_close(db);
    printf("sqlite_work: %d rows\n", rows);
    return 0;
}
