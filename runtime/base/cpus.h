/*
 * cpus.h: CPU lists (runtime/base/cpus.c), the one parser of "0-3,5" for
 * the -C option, sysfs cpumask files and /sys/devices/system/cpu/online.
 * CPU numbers go up to PS_CPUS_MAX - 1, the kernel's own limit for NR_CPUS;
 * a number beyond is an error, never skipped.
 */
#ifndef PS_BASE_CPUS_H
#define PS_BASE_CPUS_H

#include <stdbool.h>

#define PS_CPUS_MAX 65536 /* CONFIG_NR_CPUS is at most 8192; room to spare */

/* Parse "0-3,5" (a trailing newline allowed) into a sorted list without
 * duplicates, *cpus malloc'd. 0, -EINVAL for a malformed list or a CPU at
 * or above PS_CPUS_MAX, -ENOMEM. */
int ps_cpus__parse(const char *list, int **cpus, int *n);
/* The online CPUs. 0 or -errno. */
int ps_cpus__online(int **cpus, int *n);
/* list checked against the online CPUs (NULL: all of them): 0, -EINVAL for
 * a malformed list or a CPU that is not online, -errno. */
int ps_cpus__select(const char *list, int **cpus, int *n);
/* Whether cpu is online; true when that cannot be told. */
bool ps_cpus__is_online(int cpu);

#endif /* PS_BASE_CPUS_H */
