/*
 * path.h: finding a command as execvp(3) would (runtime/base/path.c).
 */
#ifndef PS_BASE_PATH_H
#define PS_BASE_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* The executable file execvp would run for file: a name with a '/' is that
 * path, anything else is looked for along $PATH (/bin:/usr/bin without
 * one; an empty entry is the current directory). 0 with the path in buf,
 * -ENOENT when there is none (or it is not an executable regular file),
 * -ENAMETOOLONG when buf is too small. */
int ps_path__find_exec(const char *file, char *buf, size_t len);
/* The directory of this process's own executable (/proc/self/exe), where a
 * build or install tree puts what the binary finds beside it: 0, or -errno
 * (-ENAMETOOLONG when buf is too small). */
int ps_path__self_dir(char *buf, size_t len);

#endif /* PS_BASE_PATH_H */
