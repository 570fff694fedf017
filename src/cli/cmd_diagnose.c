/*
 * cmd_diagnose.c - `gpufleet diagnose`: waste found by a running agent
 * (--url), or by the same rules over a recorded samples file (--fixture).
 *
 * Samples file (CSV, ours): t_s,gpu,gi,util,fb_used_mib,fb_total_mib,
 * pcie_rx_bps,procs -- gi is -1 for the whole GPU, util and pcie_rx_bps
 * -1 when unknown; rows of one series in time order.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gpufleet/err.h>

#include "../telemetry/diagnose.h"
#include "../util/csv.h"
#include "../util/json.h"
#include "../util/mem.h"
#include "cli.h"

#define MAX_SERIES 256
#define MAX_POINTS 100000

struct series {
	int gpu, gi;
	struct gf_diag_point *p;
	int n, cap;
};

static int http_get(const char *hostport, const char *path, struct gf_buf *out)
{
	char host[128];
	const char *colon = strrchr(hostport, ':');
	if (!colon || (size_t)(colon - hostport) >= sizeof(host))
		return -1;
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM },
			*ai;
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int rc = -1;
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
		char req[256];
		int n = snprintf(req, sizeof(req),
				 "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path,
				 host);
		if (write(fd, req, (size_t)n) == n) {
			char buf[4096];
			ssize_t k;
			rc = 0;
			while ((k = read(fd, buf, sizeof(buf))) > 0)
				if (gf_buf_append(out, buf, (size_t)k) != 0) {
					rc = -1;
					break;
				}
		}
	}
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc;
}

static int read_fixture(const char *path, struct series *s, int *ns)
{
	struct gf_csv c;
	struct gf_err e;
	if (gf_csv_open(&c, path, &e) != 0) {
		gf_cli_error("diagnose", "%s", e.msg);
		return -1;
	}
	static const char *const cols[8] = { "t_s",	    "gpu",
					     "gi",	    "util",
					     "fb_used_mib", "fb_total_mib",
					     "pcie_rx_bps", "procs" };
	int col[8];
	for (int i = 0; i < 8; i++)
		if ((col[i] = gf_csv_column(&c, cols[i])) < 0) {
			gf_cli_error("diagnose",
				     "%s: missing required column '%s'", path,
				     cols[i]);
			gf_csv_close(&c);
			return -1;
		}
	int rc;
	*ns = 0;
	while ((rc = gf_csv_next(&c, &e)) > 0) {
		double v[8];
		for (int i = 0; i < 8; i++) {
			const char *f = gf_csv_get(&c, col[i]);
			char *end;
			v[i] = strtod(f, &end);
			if (*f == '\0' || *end != '\0') {
				gf_cli_error("diagnose",
					     "%s:%ld: field '%s': expected a "
					     "number, got '%.30s'",
					     path, c.line, cols[i], f);
				gf_csv_close(&c);
				return -1;
			}
		}
		int k;
		for (k = 0; k < *ns; k++)
			if (s[k].gpu == (int)v[1] && s[k].gi == (int)v[2])
				break;
		if (k == *ns) {
			if (*ns >= MAX_SERIES) {
				gf_cli_error("diagnose",
					     "%s: more than %d series", path,
					     MAX_SERIES);
				gf_csv_close(&c);
				return -1;
			}
			memset(&s[k], 0, sizeof(s[k]));
			s[k].gpu = (int)v[1];
			s[k].gi = (int)v[2];
			(*ns)++;
		}
		struct series *x = &s[k];
		if (x->n >= MAX_POINTS) {
			gf_cli_error("diagnose",
				     "%s:%ld: more than %d samples "
				     "in a series",
				     path, c.line, MAX_POINTS);
			gf_csv_close(&c);
			return -1;
		}
		if (x->n > 0 && (int64_t)(v[0] * 1e3) < x->p[x->n - 1].t_ms) {
			gf_cli_error("diagnose",
				     "%s:%ld: field 't_s': time goes "
				     "backwards",
				     path, c.line);
			gf_csv_close(&c);
			return -1;
		}
		if (x->n == x->cap) {
			x->cap = x->cap ? x->cap * 2 : 64;
			x->p = gf_reallocarray(x->p, (size_t)x->cap,
					       sizeof(*x->p));
		}
		x->p[x->n++] = (struct gf_diag_point){
			(int64_t)(v[0] * 1e3), v[3], v[4], v[5], v[6], (int)v[7]
		};
	}
	gf_csv_close(&c);
	if (rc < 0) {
		gf_cli_error("diagnose", "%s", e.msg);
		return -1;
	}
	return 0;
}

bool gf_cli_diag_option(const char *cmd, int c, const char *arg,
			struct gf_diag_opts *o, bool *bad)
{
	char *end;
	double v;
	if (c != 1001 && c != 1002)
		return false;
	v = strtod(arg, &end);
	if (*end || v < 0 || (c == 1001 && v > 100) || (c == 1002 && v > 1)) {
		gf_cli_error(cmd,
			     c == 1001 ? "--idle-util: expected 0 to 100 (%%)"
				       : "--overprov: expected a share from "
					 "0 to 1");
		*bad = true;
		return true;
	}
	if (c == 1001)
		o->idle_util_pct = v;
	else
		o->overprov_frac = v;
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet diagnose [--url HOST:PORT | --fixture FILE] "
		"[--window S] [--json]\n"
		"\n"
		"GPUs wasted, and why: allocated-idle, data-starvation,\n"
		"memory-overprovisioned, mig-slack (rules: docs/telemetry.md).\n"
		"  --url HOST:PORT  ask a running agent (default 127.0.0.1:9400)\n"
		"  --fixture FILE   judge recorded samples instead (CSV: t_s,gpu,"
		"gi,util,\n"
		"                   fb_used_mib,fb_total_mib,pcie_rx_bps,procs)\n"
		"  --window S       how far back to look, seconds (default 300)\n"
		"  --idle-util PCT  at or below this utilisation a GPU is idle "
		"(default 1)\n"
		"  --overprov F     peak memory below this share of the GPU is "
		"over-provisioned\n"
		"                   (default 0.25)\n"
		"  --json           machine-readable\n");
}

int cmd_diagnose(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "fixture", required_argument, NULL, 'f' },
		{ "window", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		GF_CLI_DIAG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	bool bad = false;
	const char *url = "127.0.0.1:9400", *fixture = NULL;
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	bool json = false;
	int c;
	char *end;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 'f':
			fixture = optarg;
			break;
		case 'w':
			o.window_s = strtod(optarg, &end);
			if (*end || o.window_s <= 0) {
				gf_cli_error("diagnose", "--window: expected "
							 "seconds");
				return GF_EXIT_USAGE;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return GF_EXIT_OK;
		default:
			if (gf_cli_diag_option("diagnose", c, optarg, &o,
					       &bad)) {
				if (bad)
					return GF_EXIT_USAGE;
				break;
			}
			return gf_cli_bad_option("diagnose", argv);
		}
	}
	struct gf_buf out;
	gf_buf_init(&out, 16u << 20);
	int ret = GF_EXIT_FAIL;
	if (!fixture) {
		if (http_get(url, json ? "/v1/diagnose" : "/v1/diagnose.txt",
			     &out) != 0) {
			gf_cli_error("diagnose",
				     "cannot reach an agent at %s (start "
				     "'gpufleet agent', or use --fixture)",
				     url);
			goto out;
		}
		const char *body = strstr(gf_buf_str(&out), "\r\n\r\n");
		if (!body || !strstr(gf_buf_str(&out), " 200 ")) {
			gf_cli_error("diagnose", "%s answered with an error",
				     url);
			goto out;
		}
		body += 4;
		ret = gf_cli_print(body, strlen(body));
		goto out;
	}
	static struct series s[MAX_SERIES];
	int ns;
	if (read_fixture(fixture, s, &ns) != 0)
		goto out;
	struct gf_json j;
	if (json) {
		gf_json_init(&j, &out);
		gf_json_obj_begin(&j, NULL);
		gf_json_double(&j, "window_s", o.window_s);
		gf_json_arr_begin(&j, "findings");
	} else {
		gf_buf_printf(&out,
			      "gpufleet diagnose: %s, %d series, window "
			      "%.0f s\n\n",
			      fixture, ns, o.window_s);
	}
	int hits = 0;
	for (int k = 0; k < ns; k++) {
		struct gf_diag_result r;
		gf_diagnose(s[k].p, s[k].n, s[k].gi >= 0, &o, &r);
		for (int q = 0; q < GF_DIAG_NREASONS; q++) {
			if (!r.hit[q])
				continue;
			hits++;
			const char *name =
				gf_diag_reason_name((enum gf_diag_reason)q);
			if (json) {
				gf_json_obj_begin(&j, NULL);
				gf_json_int(&j, "gpu", s[k].gpu);
				if (s[k].gi >= 0)
					gf_json_int(&j, "gpu_instance_id",
						    s[k].gi);
				gf_json_str(&j, "reason", name);
				gf_json_str(&j, "why", r.why[q]);
				gf_json_obj_end(&j);
			} else if (s[k].gi >= 0) {
				gf_buf_printf(&out, "  GPU%d GI %d [%s]: %s\n",
					      s[k].gpu, s[k].gi, name,
					      r.why[q]);
			} else {
				gf_buf_printf(&out, "  GPU%d [%s]: %s\n",
					      s[k].gpu, name, r.why[q]);
			}
		}
	}
	if (json) {
		gf_json_arr_end(&j);
		gf_json_obj_end(&j);
	} else if (hits == 0) {
		gf_buf_puts(&out, "  no waste found\n");
	}
	ret = gf_cli_print(gf_buf_str(&out), out.len);
	for (int k = 0; k < ns; k++)
		gf_free(s[k].p);
out:
	gf_buf_release(&out);
	return ret;
}
