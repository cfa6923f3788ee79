/* JSON of a profile merged across ranks (tools/json_ranks.c). */
#ifndef HOOKIT_TOOLS_JSON_RANKS_H
#define HOOKIT_TOOLS_JSON_RANKS_H

#include "profile/profile.h"

struct json;
/* "ranks": [...], "functions": [...] into the open document object, when p
 * carries hookit merge's tables; nothing otherwise. */
void json_rank_tables(struct json *j, const struct profile *p);

#endif
