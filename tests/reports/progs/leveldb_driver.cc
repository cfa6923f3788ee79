// A leveldb workload for the C++ name tests (tests/reports/test_cxx_names.py):
// writes, reads back and scans a database in argv[1], from two threads,
// so the profile holds leveldb's own threads (its compaction thread, a
// std::thread) and the standard library's wrappers around them.
#include <cstdio>
#include <string>
#include <thread>

#include "leveldb/db.h"
#include "leveldb/write_batch.h"

static void writer(leveldb::DB *db, int base)
{
    leveldb::WriteOptions wo;
    for (int i = 0; i < 3000; i++) {
        char key[32], value[64];
        snprintf(key, sizeof key, "key%06d", base + i);
        snprintf(value, sizeof value, "value-%d-%d", base, i);
        db->Put(wo, key, value);
    }
}

int main(int argc, char **argv)
{
    leveldb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = 64 * 1024;   // small: compactions happen
    leveldb::DB *db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options, argc > 1 ? argv[1] : "/tmp/ldb", &db);
    if (!s.ok()) {
        fprintf(stderr, "open: %s\n", s.ToString().c_str());
        return 1;
    }
    std::thread a(writer, db, 0), b(writer, db, 100000);
    a.join();
    b.join();
    int found = 0;
    std::string v;
    for (int i = 0; i < 3000; i += 7) {
        char key[32];
        snprintf(key, sizeof key, "key%06d", i);
        found += db->Get(leveldb::ReadOptions(), key, &v).ok();
    }
    leveldb::Iterator *it = db->NewIterator(leveldb::ReadOptions());
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next())
        n++;
    delete it;
    db->CompactRange(nullptr, nullptr);
    delete db;
    printf("found %d of %d, %d keys\n", found, 429, n);
    return found == 429 && n == 6000 ? 0 : 1;
}
