/*
 * hookit merge across the ranks of a parallel job (docs/mpi.md), beside the
 * call-path merge of profile/aggregate.h, fed the same inputs one at a time.
 * When every input has an MPI rank:
 *
 *  - per rank (input): time, MPI time and its share, MPI calls and bytes
 *    (MPI_Init and MPI_Finalize not counted) -> metadata "ranks", a
 *    tab-separated table with a header line;
 *  - per function (by name and module, recursion counted once): sum, min,
 *    mean, max over the inputs of inclusive and exclusive time, the rank of
 *    the min and the max, imbalance = max / mean -> metadata "functions";
 *  - per call path: the merge's min_incl_input/max_incl_input as ranks
 *    (min_incl_rank, max_incl_rank), as metric columns.
 * And for any merge: imbalance_pct = 100 x max / mean of the inclusive time
 * per call path (100: perfectly even).
 *
 * Memory: the function table and one line per input; never an input kept.
 */
#ifndef HOOKIT_PROFILE_MERGE_RANKS_H
#define HOOKIT_PROFILE_MERGE_RANKS_H

#include "profile/profile.h"

struct rank_merge;

struct rank_merge *rank_merge_new(void);
/* Fold input p (read from path); inputs in the order of agg_add.  0 or -1. */
int rank_merge_add(struct rank_merge *rm, const struct profile *p, const char *path);
/* Add the metadata and columns to the merged profile.  0 or -1. */
int rank_merge_finish(struct rank_merge *rm, struct profile *merged);
void rank_merge_free(struct rank_merge *rm);

/* Partial merges (profile/aggregate.h): the state so far as metadata of
 * the partial dst (after agg_partial made it), and a partial's taken in as
 * the inputs that follow.  0 or -1. */
int rank_merge_partial(struct rank_merge *rm, struct profile *dst);
int rank_merge_add_partial(struct rank_merge *rm, const struct profile *partial);

/* A name of an MPI frame ("MPI:MPI_Send"). */
int rank_is_mpi_name(const char *name);

/* Split a line of the tables above (tab-separated) in place into at most
 * max fields; returns how many. */
int rank_table_split(char *line, char **fields, int max);

#endif
