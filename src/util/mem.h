/*
 * mem.h - allocation wrappers.  They never return NULL: on out-of-memory
 * they print one line and abort (as Redis, git and Slurm do), so callers
 * need no OOM paths.  gf_free() also NULLs the pointer.
 */
#ifndef GF_UTIL_MEM_H
#define GF_UTIL_MEM_H

#include <stddef.h>

void *gf_malloc(size_t n);
void *gf_calloc(size_t nmemb, size_t size);
/* Resize to nmemb * size bytes; aborts on overflow of the product. */
void *gf_reallocarray(void *p, size_t nmemb, size_t size);
/* p, an array of *cap elements of size bytes, grown so that index i
 * fits: the capacity doubles (from first when there is none), the new
 * elements are zeroed, *cap is updated.  p as it is when i fits. */
void *gf_grow(void *p, size_t size, size_t *cap, size_t i, size_t first);
char *gf_strdup(const char *s);
char *gf_strndup(const char *s, size_t n);
void gf__free(void *p);
#define gf_free(p)           \
	do {                 \
		gf__free(p); \
		(p) = NULL;  \
	} while (0)

#endif
