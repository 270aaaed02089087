/*
 * bits.h: the number of bits set in a word, inline. GCC without -mpopcnt
 * (the build targets any x86-64) turns __builtin_popcountll into a call
 * into libgcc, which the record decoder made several times per sample.
 */
#ifndef PS_BASE_BITS_H
#define PS_BASE_BITS_H

#include <stdint.h>

static inline unsigned ps_bits__count(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

#endif /* PS_BASE_BITS_H */
