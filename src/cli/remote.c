/*
 * remote.c - the controller's clients' shared part (remote.h).
 */
#include "cli/remote.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/fmt.h"
#include "util/mem.h"

/* --server and --token-file (or GPUFLEET_SERVER / GPUFLEET_TOKEN_FILE). */
int gf_remote_setup(struct gf_remote *c)
{
	const char *server = c->server, *tokens = c->tokens;
	if (!server)
		server = getenv("GPUFLEET_SERVER");
	if (!server)
		server = DEFAULT_SERVER;
	const char *why =
		gf_client_base_url(server, 9500, c->base, sizeof(c->base));
	if (why) {
		gf_cli_error(c->cmd, "cannot parse '--server %s': %s", server,
			     why);
		return GF_EXIT_USAGE;
	}
	if (!tokens)
		tokens = getenv("GPUFLEET_TOKEN_FILE");
	if (tokens) {
		struct gf_auth a;
		struct gf_err e;
		if (gf_auth_read(tokens, &a, &e) != 0) {
			gf_cli_error(c->cmd, "--token-file: %s", e.msg);
			return GF_EXIT_FAIL;
		}
		/* the file's first token is the one this client sends (the
		 * file's reader takes none longer than GF_AUTH_TOKEN_MAX) */
		int cut =
			gf_fmt(c->token, sizeof(c->token), "%s", a.e[0].token);
		gf_auth_release(&a);
		if (cut) {
			gf_cli_error(c->cmd,
				     "--token-file: its token is longer "
				     "than %d bytes",
				     GF_AUTH_TOKEN_MAX);
			return GF_EXIT_FAIL;
		}
	}
	if (!c->ca)
		c->ca = getenv("GPUFLEET_CA");
	char clear[256];
	if (c->token[0] && !gf_client_token_safe(c->base, c->insecure_http,
						 clear, sizeof(clear))) {
		gf_cli_error(c->cmd, "%s", clear);
		return GF_EXIT_USAGE;
	}
	return 0;
}

struct gf_cli_opt *gf_remote_opts(struct gf_remote *r, struct gf_cli_opt *out)
{
	const struct gf_cli_opt rows[] = {
		GF_OPT_STR("server", &r->server),
		GF_OPT_STR("token-file", &r->tokens),
		GF_OPT_FLAG("json", &r->json),
		GF_OPT_STR("ca", &r->ca),
		GF_OPT_FLAG("insecure-http", &r->insecure_http),
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		*out++ = rows[i];
	return out;
}

/* One exchange; 0 with *ans (release it) when the server answered with
 * a 2xx, else the message printed and an exit code. */
int gf_remote_call(const struct gf_remote *c, unsigned method, const char *path,
		   const char *body, struct gf_client_answer *ans)
{
	char url[sizeof(c->base) + GF_REMOTE_PATH_MAX];
	if (gf_fmt(url, sizeof(url), "%s%s", c->base, path)) {
		gf_cli_error(c->cmd,
			     "cannot ask for '%.60s...': longer than %zu "
			     "bytes",
			     path, sizeof(url) - sizeof(c->base));
		memset(ans, 0, sizeof(*ans));
		return GF_EXIT_USAGE;
	}
	struct gf_client_req q = { .method = method,
				   .url = url,
				   .token = c->token[0] ? c->token : NULL,
				   .body = body,
				   .body_len = body ? strlen(body) : 0,
				   .ca = c->ca,
				   .insecure_http = c->insecure_http };
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_client_request(NULL, &q, ans, &e) != 0) {
		gf_cli_error(c->cmd, "%s", e.msg);
		gf_client_answer_release(ans);
		return GF_EXIT_FAIL;
	}
	if (ans->status >= 200 && ans->status < 300)
		return 0;
	/* the server's {"error", "detail"} */
	struct gf_jv *v = NULL;
	const char *detail = NULL, *error = NULL;
	if (gf_jv_parse(gf_buf_str(&ans->body), ans->body.len, &v, &e) == 0) {
		error = gf_jv_str(gf_jv_get(v, "error"));
		detail = gf_jv_str(gf_jv_get(v, "detail"));
	}
	gf_cli_error(c->cmd, "%s: %ld %s%s%s", url, ans->status,
		     error ? error : "", detail ? ": " : "",
		     detail ? detail : "");
	gf_jv_free(v);
	gf_client_answer_release(ans);
	return GF_EXIT_FAIL;
}

const char *gf_remote_job_prefix(const char *id)
{
	return id[0] && strspn(id, "0123456789") == strlen(id) ? "j" : "";
}

int gf_remote_callf(const struct gf_remote *c, unsigned method,
		    const char *body, struct gf_client_answer *ans,
		    const char *fmt, ...)
{
	char path[GF_REMOTE_PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int cut = gf_vfmt(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (cut) {
		gf_cli_error(c->cmd,
			     "cannot ask for '%.60s...': longer than %zu "
			     "bytes",
			     path, sizeof(path) - 1);
		memset(ans, 0, sizeof(*ans));
		return GF_EXIT_USAGE;
	}
	return gf_remote_call(c, method, path, body, ans);
}

int gf_remote_print(const struct gf_client_answer *a)
{
	return gf_cli_print(gf_buf_str(&a->body), a->body.len);
}

/* Parse a whole answer as JSON; NULL (message printed) if it is not. */
struct gf_jv *gf_remote_json(const struct gf_remote *c,
			     const struct gf_client_answer *a)
{
	struct gf_jv *v;
	struct gf_err e;
	if (gf_jv_parse(gf_buf_str(&a->body), a->body.len, &v, &e) != 0) {
		gf_cli_error(c->cmd, "the server's answer is not JSON: %s",
			     e.msg);
		return NULL;
	}
	return v;
}

int64_t gf_remote_num(const struct gf_jv *o, const char *k)
{
	int64_t x = 0;
	gf_jv_int(gf_jv_get(o, k), &x);
	return x;
}

const char *gf_remote_str(const struct gf_jv *o, const char *k)
{
	const char *s = gf_jv_str(gf_jv_get(o, k));
	return s ? s : "-";
}

int gf_remote_options(struct gf_remote *r, int argc, char **argv,
		      void (*usage)(FILE *))
{
	static const struct gf_cli_opt opts[] = { GF_OPT_END };
	struct gf_cli_args args = GF_CLI_ARGS(r->cmd, argc, argv, opts, usage);
	args.remote = r;
	return gf_cli_options(&args);
}

int gf_remote_show(const struct gf_remote *r, unsigned method, const char *path,
		   const char *body, gf_remote_render render, const void *arg)
{
	struct gf_client_answer a;
	int rc = gf_remote_call(r, method, path, body, &a);
	if (rc)
		return rc;
	if (r->json) {
		rc = gf_remote_print(&a);
	} else {
		struct gf_jv *v = gf_remote_json(r, &a);
		rc = v ? GF_EXIT_OK : GF_EXIT_FAIL;
		if (v)
			render(v, arg);
		gf_jv_free(v);
	}
	gf_client_answer_release(&a);
	return rc;
}

int gf_remote_get_command(const char *cmd, int argc, char **argv,
			  void (*usage)(FILE *), const char *path,
			  gf_remote_render render)
{
	struct gf_remote r = { .cmd = cmd };
	int rc = gf_remote_options(&r, argc, argv, usage);
	if (rc >= 0)
		return rc;
	if (gf_cli_no_args(cmd, argc, argv))
		return GF_EXIT_USAGE;
	rc = gf_remote_setup(&r);
	return rc ? rc
		  : gf_remote_show(&r, GF_HTTP_GET, path, NULL, render, NULL);
}
