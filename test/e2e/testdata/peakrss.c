/*
 * peakrss OUT COMMAND [ARG...]: runs COMMAND with this environment and
 * writes its peak RSS in KiB (getrusage(2), ru_maxrss) to OUT; exits with
 * its status. Linux charges a child the RSS its parent had when it exec'd,
 * so the parent is this: a fork(2) that holds no copy of the environment
 * but the kernel's.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *out;
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: peakrss OUT COMMAND [ARG...]\n");
		return 125;
	}
	pid = fork();
	if (pid < 0) {
		perror("peakrss: fork");
		return 125;
	}
	if (pid == 0) {
		execve(argv[2], argv + 2, environ);
		perror("peakrss: execve");
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("peakrss: wait4");
		return 125;
	}
	out = fopen(argv[1], "w");
	if (out == NULL || fprintf(out, "%ld", ru.ru_maxrss) < 0 || fclose(out) != 0) {
		perror("peakrss: writing the peak");
		return 125;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
