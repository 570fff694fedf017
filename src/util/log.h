/*
 * log.h - one line per event on stderr: "gpufleet: <level>: <subsys>: msg".
 * The level threshold comes from gf_log_set_level() (the CLI maps -v and
 * GPUFLEET_LOG=debug|info|warn|error onto it).
 */
#ifndef GF_UTIL_LOG_H
#define GF_UTIL_LOG_H

enum gf_log_level {
	GF_LOG_ERROR = 0,
	GF_LOG_WARN = 1,
	GF_LOG_INFO = 2,
	GF_LOG_DEBUG = 3,
};

void gf_log_set_level(enum gf_log_level level);
enum gf_log_level gf_log_get_level(void);
/* Parse "error", "warn", "info", "debug"; returns 0 or GF_EINVAL. */
int gf_log_parse_level(const char *s, enum gf_log_level *out);
void gf_log(enum gf_log_level level, const char *subsys, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
