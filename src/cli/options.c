/*
 * options.c - the option layer every command's options go through
 * (cli.h): getopt_long's table built from the command's gf_cli_opt rows
 * and the shared groups (node source, connection to the controller,
 * --json, --policy), values stored and numbers checked against their
 * range with one error, and only the rows the command takes apart itself
 * handed back.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "server/server.h"
#include "util/fmt.h"

/* getopt_long's code of the command's row i: above every char and every
 * code a command or a shared group uses. */
#define ROW_CODE 0x10000

/* getopt_long's code of the shared groups' row i (gf_cli_args.group). */
#define GROUP_CODE 0x20000

static const struct option policy_rows[] = {
	{ "policy", required_argument, NULL, 'P' },
	{ NULL, 0, NULL, 0 },
};
static const struct option help_rows[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int gf_cli_bad_option(const char *cmd, char **argv)
{
	const char *opt = argv[optind - 1];
	if (optopt && optopt != '?' && (opt[0] != '-' || opt[1] != '-'))
		gf_cli_error(cmd,
			     "option '-%c' is unknown or needs a value "
			     "(see 'gpufleet %s -h')",
			     optopt, cmd);
	else
		gf_cli_error(cmd,
			     "option '%s' is unknown or needs a value "
			     "(see 'gpufleet %s -h')",
			     opt, cmd);
	return GF_EXIT_USAGE;
}

/* The rows of the shared groups a asks for (json, node, remote), into
 * a->group. */
static void fill_group(struct gf_cli_args *a)
{
	struct gf_cli_opt *g = a->group;
	if (a->json)
		*g++ = (struct gf_cli_opt)GF_OPT_FLAG("json", a->json);
	if (a->node) {
		struct gf_node_source *s = &a->node->src;
		const struct gf_cli_opt node[] = {
			GF_OPT_STR("xml", &s->xml),
			GF_OPT_STR("nccl-xml", &s->nccl_xml),
			GF_OPT_STR("template", &s->template_name),
			GF_OPT_FLAG("this-system", &s->this_system),
			GF_OPT_SET("nvml", &s->nvml, 1),
			GF_OPT_SET("no-nvml", &s->nvml, 0),
		};
		for (size_t i = 0; i < sizeof(node) / sizeof(node[0]); i++)
			*g++ = node[i];
	}
	if (a->remote)
		g = gf_remote_opts(a->remote, g);
	*g = (struct gf_cli_opt)GF_OPT_END;
}

/* The rows of table (ended by a NULL name) after the n already in
 * a->built, their codes from base on: the new count.  A table too long
 * for built is a programmer's error: cut. */
static int add_opts(struct gf_cli_args *a, int n,
		    const struct gf_cli_opt *table, int base)
{
	for (const struct gf_cli_opt *o = table; o && o->name; o++) {
		if (n == GF_CLI_OPTS_MAX - 1)
			break;
		bool code = o->kind == GF_CLI_CODE || o->kind == GF_CLI_ARG;
		bool none = o->kind == GF_CLI_CODE || o->kind == GF_CLI_FLAG ||
			    o->kind == GF_CLI_SET;
		a->built[n++] = (struct option){
			o->name, none ? no_argument : required_argument, NULL,
			code ? o->code : base + (int)(o - table)
		};
	}
	return n;
}

/* rows (ended by a NULL name) after the n already in a->built: the new
 * count. */
static int add_rows(struct gf_cli_args *a, int n, const struct option *rows)
{
	for (; rows && rows->name && n < GF_CLI_OPTS_MAX - 1; rows++)
		a->built[n++] = *rows;
	return n;
}

static void build(struct gf_cli_args *a)
{
	fill_group(a);
	int n = add_opts(a, 0, a->opts, ROW_CODE);
	n = add_opts(a, n, a->group, GROUP_CODE);
	n = add_rows(a, n, a->policies ? policy_rows : NULL);
	n = add_rows(a, n, help_rows);
	a->built[n] = (struct option){ NULL, 0, NULL, 0 };
}

int gf_cli_bad_value(struct gf_cli_args *a, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(why, sizeof(why), fmt, ap); /* a cut one marked "..." */
	va_end(ap);
	gf_cli_error(a->cmd, "cannot parse '--%s %s': %s",
		     a->built[a->index].name, optarg, why);
	a->rc = GF_EXIT_USAGE;
	return GF_EXIT_USAGE;
}

/* A whole number in o's range, stored as o's target is: 0, or -1. */
static int take_int(const struct gf_cli_opt *o, const char *arg)
{
	char *end;
	errno = 0;
	if (o->kind == GF_CLI_ULLONG) {
		unsigned long long u = strtoull(arg, &end, 10);
		if (!*arg || *arg == '-' || *end || errno)
			return -1;
		*(unsigned long long *)o->to = u;
		return 0;
	}
	long long v = strtoll(arg, &end, 10);
	if (!*arg || *end || errno || v < o->min || v > o->max)
		return -1;
	switch (o->kind) {
	case GF_CLI_INT:
		*(int *)o->to = (int)v;
		break;
	case GF_CLI_LONG:
		*(long *)o->to = (long)v;
		break;
	case GF_CLI_UINT:
		*(unsigned *)o->to = (unsigned)v;
		break;
	default:
		*(long long *)o->to = v;
		break;
	}
	return 0;
}

/* A number in o's range ("" and "nan" are not): 0, or -1. */
static int take_real(const struct gf_cli_opt *o, const char *arg)
{
	char *end;
	double v = strtod(arg, &end);
	bool low = o->min ? v > o->dmin : v >= o->dmin; /* NaN: neither */
	if (end == arg || *end || !low || !(v <= o->dmax))
		return -1;
	*(double *)o->to = v;
	return 0;
}

/* "cannot parse '--NAME VALUE': expected NOUN from MIN to MAX" */
static void bad_number(struct gf_cli_args *a, const struct gf_cli_opt *o)
{
	if (o->kind == GF_CLI_DOUBLE && o->min)
		gf_cli_error(a->cmd,
			     "cannot parse '--%s %s': expected %s above %g and "
			     "at most %g",
			     o->name, optarg, o->noun, o->dmin, o->dmax);
	else if (o->kind == GF_CLI_DOUBLE)
		gf_cli_error(a->cmd,
			     "cannot parse '--%s %s': expected %s from %g to "
			     "%g",
			     o->name, optarg, o->noun, o->dmin, o->dmax);
	else if (o->kind == GF_CLI_ULLONG)
		gf_cli_error(a->cmd,
			     "cannot parse '--%s %s': expected %s from 0 to "
			     "%llu",
			     o->name, optarg, o->noun, ULLONG_MAX);
	else if (o->max == GF_CLI_NO_MAX)
		gf_cli_error(a->cmd,
			     "cannot parse '--%s %s': expected %s, %lld or "
			     "more",
			     o->name, optarg, o->noun, o->min);
	else
		gf_cli_error(a->cmd,
			     "cannot parse '--%s %s': expected %s from %lld to "
			     "%lld",
			     o->name, optarg, o->noun, o->min, o->max);
	a->rc = GF_EXIT_USAGE;
}

/* A duration (util/duration.h) in o's range, stored in o's unit: 0, or
 * -1 with why set (NULL: out of the range). */
static int take_duration(const struct gf_cli_opt *o, const char *arg,
			 const char **why)
{
	double secs;
	if (gf_duration_parse(arg, (double)o->min / 1000, &secs, why) != 0)
		return -1;
	*why = NULL;
	if (secs < o->dmin || secs > o->dmax)
		return -1;
	double v = secs * 1000 / (double)o->max; /* in the target's unit */
	double r = nearbyint(v);
	if (o->kind != GF_CLI_DUR_DOUBLE && fabs(v - r) > 1e-6) {
		*why = o->max == 1 ? "not a whole number of milliseconds"
				   : "not a whole number of seconds";
		return -1;
	}
	switch (o->kind) {
	case GF_CLI_DUR_INT:
		*(int *)o->to = (int)r;
		break;
	case GF_CLI_DUR_LONG:
		*(long *)o->to = (long)r;
		break;
	case GF_CLI_DUR_LLONG:
		*(long long *)o->to = (long long)r;
		break;
	default:
		*(double *)o->to = secs;
		break;
	}
	return 0;
}

/* "cannot parse '--NAME VALUE': WHY (a duration: FORMS)", or "expected
 * a duration from LO to HI" when why is NULL. */
static void bad_duration(struct gf_cli_args *a, const struct gf_cli_opt *o,
			 const char *why)
{
	char lo[32], hi[32];
	if (why)
		gf_cli_error(a->cmd, "cannot parse '--%s %s': %s", o->name,
			     optarg, why);
	else
		gf_cli_error(a->cmd,
			     "cannot parse '--%s %s': expected a duration from "
			     "%s to %s",
			     o->name, optarg,
			     gf_duration_str(o->dmin, lo, sizeof(lo)),
			     gf_duration_str(o->dmax, hi, sizeof(hi)));
	a->rc = GF_EXIT_USAGE;
}

/* The command's row o with the value optarg stored: 0, or -1 (said). */
static int take_row(struct gf_cli_args *a, const struct gf_cli_opt *o)
{
	switch (o->kind) {
	case GF_CLI_STR:
		*(const char **)o->to = optarg;
		return 0;
	case GF_CLI_FLAG:
		*(bool *)o->to = true;
		return 0;
	case GF_CLI_SET:
		*(int *)o->to = (int)o->min;
		return 0;
	case GF_CLI_LIST:
		if (*o->count < o->max) {
			((const char **)o->to)[(*o->count)++] = optarg;
			return 0;
		}
		gf_cli_error(a->cmd, "more than %lld '--%s' options", o->max,
			     o->name);
		a->rc = GF_EXIT_USAGE;
		return -1;
	case GF_CLI_DOUBLE:
		if (take_real(o, optarg) == 0)
			return 0;
		break;
	case GF_CLI_DUR_INT:
	case GF_CLI_DUR_LONG:
	case GF_CLI_DUR_LLONG:
	case GF_CLI_DUR_DOUBLE: {
		const char *why = NULL;
		if (take_duration(o, optarg, &why) == 0)
			return 0;
		bad_duration(a, o, why);
		return -1;
	}
	default:
		if (take_int(o, optarg) == 0)
			return 0;
		break;
	}
	bad_number(a, o);
	return -1;
}

int gf_cli_next(struct gf_cli_args *a)
{
	if (!a->started) {
		optind =
			0; /* glibc: start afresh, whatever was parsed before */
		opterr = 0;
		a->started = true;
		a->rc = -1;
		build(a);
	}
	if (a->rc >= 0) /* ended: -h, or a bad option or value said */
		return -1;
	const char *shortopts = a->shortopts ? a->shortopts : "h";
	for (;;) {
		int c = getopt_long(a->argc, a->argv, shortopts, a->built,
				    &a->index);
		if (c == -1) {
			if (a->no_args &&
			    gf_cli_no_args(a->cmd, a->argc, a->argv))
				a->rc = GF_EXIT_USAGE;
			return -1;
		}
		if (c == 'h') {
			a->usage(stdout);
			a->rc = GF_EXIT_OK;
			return -1;
		}
		if (c == '?' || c == ':') {
			a->rc = gf_cli_bad_option(a->cmd, a->argv);
			return -1;
		}
		a->given |= 1ULL << a->index;
		if (c >= GROUP_CODE) {
			if (take_row(a, &a->group[c - GROUP_CODE]))
				return -1;
		} else if (c >= ROW_CODE) {
			if (take_row(a, &a->opts[c - ROW_CODE]))
				return -1;
		} else if (c == 'P' && a->policies) {
			if (gf_cli_policies(a->cmd, optarg, a->policies,
					    a->npolicies))
				a->rc = GF_EXIT_USAGE;
			if (a->rc >= 0)
				return -1;
		} else {
			return c;
		}
	}
}

bool gf_cli_given(const struct gf_cli_args *a, const char *name)
{
	for (int i = 0; a->built[i].name; i++)
		if (!strcmp(a->built[i].name, name))
			return a->given >> i & 1;
	return false;
}

int gf_cli_options(struct gf_cli_args *a)
{
	while (gf_cli_next(a) != -1)
		continue; /* every option is taken inside */
	return a->rc;
}

void gf_cli_conn_limits(long per, unsigned *out)
{
	if (per >= 0)
		*out = per ? (unsigned)per : GF_SERVER_NO_LIMIT;
}
