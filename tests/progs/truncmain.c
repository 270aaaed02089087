/*
 * truncmain.c: forks a child every 50 ms that spins 30 ms in trunclib.c's
 * functions while the parent spins 20 ms, for ever: a new process (and a
 * new unwinder in a profiler) every 50 ms, all mapping one library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
long run(long, int);
int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		pid_t p = fork();
		if (p == 0) {
			run(1, 30);
			_exit(0);
		}
		run(2, 20);
		waitpid(p, NULL, 0);
	}
}
