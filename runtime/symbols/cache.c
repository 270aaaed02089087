/*
 * cache.c: the two containers the symbolizer keeps its answers in. A
 * profile resolves the same few hot addresses over and over, so every
 * answer (a miss too) goes into an open-addressing table keyed by address,
 * and the text of the answers into an arena of 64 KiB blocks that is freed
 * only with its file. Past PS_CACHE_MAX entries per table answers are still
 * computed, only not kept, so a pathological profile costs time, not all
 * the memory there is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

#define PS_CACHE_MAX	 (1u << 20)
#define PS_ARENA_BLOCK	 65536
#define PS_CACHE_INITIAL 256

struct ps_arena_block {
	struct ps_arena_block *next;
	size_t used, size;
	_Alignas(8) char data[];
};

struct ps_cache_slot {
	uint64_t key; /* address + 1; 0 marks an empty slot */
	const void *value;
};

void *ps_arena__alloc(struct ps_arena *a, size_t n)
{
	struct ps_arena_block *b = a->head;

	n = (n + 7) & ~(size_t)7;
	if (!b || b->used + n > b->size) {
		size_t size = n > PS_ARENA_BLOCK ? n : PS_ARENA_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		b->next = a->head;
		a->head = b;
		a->bytes += sizeof(*b) + size;
	}
	b->used += n;
	return b->data + b->used - n;
}

char *ps_arena__strdup(struct ps_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = ps_arena__alloc(a, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

void ps_arena__free(struct ps_arena *a)
{
	struct ps_arena_block *b, *next;

	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
	a->bytes = 0;
}

size_t ps_addr_cache__bytes(const struct ps_addr_cache *c)
{
	return c->nslots * sizeof(struct ps_cache_slot);
}

static inline size_t slot_of(uint64_t key, size_t mask)
{
	/* Fibonacci hashing: code addresses differ mostly in their low bits. */
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

bool ps_addr_cache__get(const struct ps_addr_cache *c, uint64_t addr, const void **v)
{
	uint64_t key = addr + 1;
	size_t mask;

	if (!c->nslots)
		return false;
	mask = c->nslots - 1;
	for (size_t j = slot_of(key, mask); c->slots[j].key; j = (j + 1) & mask) {
		if (c->slots[j].key == key) {
			*v = c->slots[j].value;
			return true;
		}
	}
	return false;
}

static int grow(struct ps_addr_cache *c)
{
	size_t n = c->nslots ? c->nslots * 2 : PS_CACHE_INITIAL;
	struct ps_cache_slot *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < c->nslots; i++) {
		size_t j;

		if (!c->slots[i].key)
			continue;
		for (j = slot_of(c->slots[i].key, n - 1); slots[j].key; j = (j + 1) & (n - 1))
			;
		slots[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = slots;
	c->nslots = n;
	return 0;
}

void ps_addr_cache__put(struct ps_addr_cache *c, uint64_t addr, const void *v)
{
	uint64_t key = addr + 1;
	size_t j;

	/* Keep the load under a half so probes stay short. */
	if (c->nused >= PS_CACHE_MAX || ((c->nused + 1) * 2 > c->nslots && grow(c) < 0))
		return; /* a cache that cannot grow only costs time */
	for (j = slot_of(key, c->nslots - 1); c->slots[j].key; j = (j + 1) & (c->nslots - 1))
		if (c->slots[j].key == key)
			break;
	if (!c->slots[j].key)
		c->nused++;
	c->slots[j] = (struct ps_cache_slot){.key = key, .value = v};
}

const void *ps_addr_cache__value(const struct ps_addr_cache *c, size_t i)
{
	return i < c->nslots && c->slots[i].key ? c->slots[i].value : NULL;
}

void ps_addr_cache__free(struct ps_addr_cache *c)
{
	free(c->slots);
	c->slots = NULL;
	c->nslots = c->nused = 0;
}
