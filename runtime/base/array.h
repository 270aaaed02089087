/*
 * array.h: growable arrays (runtime/base/array.c). An array is a pointer,
 * a count kept by the caller and a capacity; reserving room doubles the
 * capacity (from 8), so appending is amortised O(1), and leaves the array
 * as it was when memory runs out. The first argument is the address of the
 * array pointer, of any element type:
 *
 *	if (ps_array__reserve(&v, &cap, n + 1, sizeof(*v)))
 *		return -ENOMEM;
 *	v[n++] = x;
 */
#ifndef PS_BASE_ARRAY_H
#define PS_BASE_ARRAY_H

#include <stddef.h>

/* Room for at least need elements of elem bytes in *arrp; 0 or -ENOMEM. */
int ps_array__reserve(void *arrp, size_t *cap, size_t need, size_t elem);
/* Make *arrp hold exactly n elements (a parallel array of another's
 * capacity); 0 or -ENOMEM with *arrp unchanged. */
int ps_array__reserve_exact(void *arrp, size_t n, size_t elem);

#endif /* PS_BASE_ARRAY_H */
