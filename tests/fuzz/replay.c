/*
 * replay.c - the main() of a harness outside libFuzzer: every regular
 * file of the directories given (sorted, so the run is the same each
 * time) through LLVMFuzzerTestOneInput, once.  A crash or a sanitizer
 * report ends the process (tests/fuzz/replay.sh says FAIL, with the
 * "replay: FILE" line written before each input); otherwise it prints
 * "N inputs" and exits 0.
 *
 *   replay_NAME DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (nb == NULL)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	if (buf == NULL)
		return -1;
	/* exactly n bytes, as libFuzzer hands them (ASan sees overreads) */
	uint8_t *exact = malloc(n ? n : 1);
	if (exact == NULL) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int total = 0;
	for (int a = 1; a < argc; a++) {
		struct dirent **names;
		int n = scandir(argv[a], &names, NULL, alphasort);
		if (n < 0) {
			fprintf(stderr, "replay: cannot read %s\n", argv[a]);
			return 2;
		}
		for (int i = 0; i < n; i++) {
			char path[4096];
			struct stat st;
			snprintf(path, sizeof(path), "%s/%s", argv[a],
				 names[i]->d_name);
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				/* which one, should it crash */
				fprintf(stderr, "replay: %s\n", path);
				if (replay_file(path) != 0) {
					fprintf(stderr,
						"replay: cannot read %s\n",
						path);
					return 2;
				}
				total++;
			}
			free(names[i]);
		}
		free(names);
	}
	printf("%d inputs\n", total);
	return 0;
}
