/*
 * array.c: room in growable arrays (base/array.h). The array pointer is
 * passed by address as void * and copied in and out with memcpy, so one
 * function serves every element type without casting a T ** to void **.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

int ps_array__reserve_exact(void *arrp, size_t n, size_t elem)
{
	void *v;

	if (elem && n > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&v, arrp, sizeof(v));
	v = realloc(v, n ? n * elem : 1);
	if (!v)
		return -ENOMEM;
	memcpy(arrp, &v, sizeof(v));
	return 0;
}

int ps_array__reserve(void *arrp, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 8;
	int err;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	err = ps_array__reserve_exact(arrp, n, elem);
	if (!err)
		*cap = n;
	return err;
}
