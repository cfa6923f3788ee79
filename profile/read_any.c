/* Any input of the `hookit` commands, by what the file holds: a profile
 * (read.c) or a trace (trace_read.c, made a profile by trace_to_profile).
 * A file of its own beside the readers it chooses between, so that neither
 * reader depends on the other (read_file.h). */
#include "profile/read_file.h"
#include "profile/profile.h"
#include "profile/trace.h"

#define PUBLIC __attribute__((visibility("default")))

PUBLIC struct profile *profile_or_trace_read_file(const char *path, char *err, size_t errlen)
{
    if (!trace_file_is_trace(path))
        return profile_read_file(path, err, errlen);
    struct trace *tr = trace_read_file(path, err, errlen);
    if (!tr)
        return NULL;
    struct profile *p = trace_to_profile(tr, err, errlen);
    trace_free(tr);
    return p;
}
