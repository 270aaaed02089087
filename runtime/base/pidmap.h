/*
 * pidmap.h: a hash table from pid to a fixed-size value (runtime/base/
 * pidmap.c): open addressing with linear probing, Fibonacci hashing, kept
 * at most half full. Values live in the table, so a pointer to one is good
 * until the next put or del. Pids are >= 0; removal shifts the entries
 * after the removed one back, so lookups never meet a tombstone.
 */
#ifndef PS_BASE_PIDMAP_H
#define PS_BASE_PIDMAP_H

#include <stddef.h>
#include <sys/types.h>

struct ps_pidmap {
	unsigned char *slots; /* cap entries of (pid_t, value) */
	size_t n, cap;	      /* entries used, allocated (a power of two) */
	size_t vsize;	      /* bytes of a value */
	size_t stride;	      /* bytes of an entry */
};

/* An empty map of values of vsize bytes (nothing allocated yet). */
void ps_pidmap__init(struct ps_pidmap *m, size_t vsize);
void ps_pidmap__free(struct ps_pidmap *m);
/* pid's value, or NULL. */
void *ps_pidmap__get(const struct ps_pidmap *m, pid_t pid);
/* pid's value, zeroed when pid is new; NULL on ENOMEM or pid < 0. */
void *ps_pidmap__put(struct ps_pidmap *m, pid_t pid);
/* Forget pid (nothing when it is not there). */
void ps_pidmap__del(struct ps_pidmap *m, pid_t pid);
/* Call fn on every entry, in no order. */
void ps_pidmap__each(const struct ps_pidmap *m, void (*fn)(pid_t pid, void *value, void *ctx),
		     void *ctx);

#endif /* PS_BASE_PIDMAP_H */
