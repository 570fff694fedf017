/*
 * mem.c - allocation that aborts on failure with a message.
 */
#include "util/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	fprintf(stderr, "gpufleet: out of memory allocating %zu bytes\n", n);
	abort();
}

void *gf_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		oom(n);
	return p;
}

void *gf_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (p == NULL)
		oom(nmemb * size);
	return p;
}

void *gf_reallocarray(void *p, size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size)
		oom(SIZE_MAX);
	size_t n = nmemb * size;
	void *q = realloc(p, n ? n : 1);
	if (q == NULL)
		oom(n);
	return q;
}

void *gf_grow(void *p, size_t size, size_t *cap, size_t i, size_t first)
{
	if (i < *cap)
		return p;
	size_t n = *cap ? *cap : (first ? first : 1);
	while (n <= i) {
		if (n > SIZE_MAX / 2)
			oom(SIZE_MAX);
		n *= 2;
	}
	char *q = gf_reallocarray(p, n, size);
	memset(q + *cap * size, 0, (n - *cap) * size);
	*cap = n;
	return q;
}

char *gf_strdup(const char *s)
{
	return gf_strndup(s, strlen(s));
}

char *gf_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = gf_malloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void gf__free(void *p)
{
	free(p);
}
