/*
 * log.c - leveled, single-line logging to stderr.
 */
#include "util/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/err.h>

static atomic_int log_level = GF_LOG_WARN;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void gf_log_set_level(enum gf_log_level level)
{
	atomic_store(&log_level, (int)level);
}

enum gf_log_level gf_log_get_level(void)
{
	return (enum gf_log_level)atomic_load(&log_level);
}

int gf_log_parse_level(const char *s, enum gf_log_level *out)
{
	for (int i = 0; i < 4; i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum gf_log_level)i;
			return 0;
		}
	}
	return GF_EINVAL;
}

void gf_log(enum gf_log_level level, const char *subsys, const char *fmt, ...)
{
	if ((int)level > atomic_load(&log_level))
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "gpufleet: %s: %s: %s\n", level_names[level], subsys,
		line);
}
