/*
 * Lists what a real libcuda.so.1 calls each CUresult: for every code from 0
 * to 999 that cuGetErrorName knows, "code<TAB>name<TAB>string". The e2e
 * suite compiles this, runs it against Debian's libcuda1 and compares the
 * output with libcuda-error-names.txt; preflight/cuda's tests check the
 * names of cuda.Meanings against that file. Neither call needs a GPU.
 *
 *   gcc -o errnames errnames.c -ldl && ./errnames /path/to/libcuda.so.1
 */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*lookup_fn)(int, const char **);

int main(int argc, char **argv)
{
	void *lib;
	lookup_fn name, text;

	if (argc != 2) {
		fprintf(stderr, "usage: errnames LIBCUDA\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		fprintf(stderr, "errnames: %s\n", dlerror());
		return 1;
	}
	name = (lookup_fn)dlsym(lib, "cuGetErrorName");
	text = (lookup_fn)dlsym(lib, "cuGetErrorString");
	if (name == NULL || text == NULL) {
		fprintf(stderr, "errnames: %s lacks cuGetErrorName or cuGetErrorString\n", argv[1]);
		return 1;
	}
	for (int code = 0; code < 1000; code++) {
		const char *n = NULL, *s = NULL;

		if (name(code, &n) != 0 || n == NULL)
			continue;
		if (text(code, &s) != 0 || s == NULL)
			s = "";
		printf("%d\t%s\t%s\n", code, n, s);
	}
	return 0;
}
