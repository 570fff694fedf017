/*
 * fuzz.h - what the libFuzzer harnesses of tests/fuzz share
 * (docs/fuzzing.md).  Each fuzz_NAME.c defines LLVMFuzzerTestOneInput for
 * one input surface; it is linked either with libFuzzer (`make fuzz`,
 * clang) or with replay.c, which feeds it every file of the corpus
 * directories it is given (`make check`, the sanitizer tree).
 *
 * A harness never asserts on what a reader answers: a reader must take
 * any bytes and either succeed or fail with a negative code and a
 * message; crashes, sanitizer reports, leaks and hangs are the findings.
 */
#ifndef GF_TESTS_FUZZ_H
#define GF_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpufleet/err.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as a NUL-terminated string (the caller frees it). */
static inline char *fz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (s == NULL)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static char fz_path[64];

static inline void fz_unlink(void)
{
	if (fz_path[0])
		unlink(fz_path);
}

/*
 * The bytes written to this process's scratch file (readers that take a
 * path), its name ending in suffix (".csv", ".yaml", "" ...).  The path
 * stays the same for the whole run and is removed at exit.
 */
static inline const char *fz_file(const uint8_t *data, size_t size,
				  const char *suffix)
{
	if (fz_path[0] == '\0') {
		snprintf(fz_path, sizeof(fz_path), "/tmp/gf-fuzz-%ld%s",
			 (long)getpid(), suffix);
		atexit(fz_unlink);
	}
	FILE *f = fopen(fz_path, "wb");
	if (f == NULL)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
	return fz_path;
}

/*
 * A reader's answer: 0 (or a count), or a negative code with a one-line
 * message; a negative code without one is a finding (abort).
 */
static inline void fz_answer(const char *what, int rc, const struct gf_err *e)
{
	if (rc < 0 && (e->msg[0] == '\0' || strchr(e->msg, '\n') != NULL)) {
		fprintf(stderr,
			"%s: code %d without a one-line message: '%s'\n", what,
			rc, e->msg);
		abort();
	}
}

#endif
