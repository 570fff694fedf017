/*
 * auth.c - the token file and bearer-token checks.  Tokens are found by
 * their SipHash under a key drawn when the file is read (an open
 * addressing table), then compared in constant time: a lookup costs the
 * same for 1 or 65,536 tokens, and what a client can time (the probe
 * sequence) depends on a hash it cannot compute without the key.
 */
#include "server/auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/siphash.h"
#include "util/str.h"

static bool token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("._~+/=-", c) != NULL;
}

static uint64_t hash_of(const struct gf_auth *a, const char *tok, size_t len)
{
	return gf_siphash24(a->key, tok, len);
}

/* Entry i into the table (a free slot exists: nslots >= 2 x max). */
static void add_slot(struct gf_auth *a, int i)
{
	uint64_t h = hash_of(a, a->e[i].token, strlen(a->e[i].token));
	int mask = a->nslots - 1;
	int k = (int)(h & (uint64_t)mask);
	while (a->slot[k])
		k = (k + 1) & mask;
	a->slot[k] = i + 1;
	a->hash[k] = h;
}

static int parse_line(char *line, const char *path, int lineno,
		      struct gf_auth *a, struct gf_err *e)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *save = NULL;
	char *tok = strtok_r(line, " \t\r\n", &save);
	if (tok == NULL)
		return 0;
	char *role = strtok_r(NULL, " \t\r\n", &save);
	char *user = role ? strtok_r(NULL, " \t\r\n", &save) : NULL;
	if (role == NULL || (user && strtok_r(NULL, " \t\r\n", &save)))
		return gf_err_set(
			e, GF_EPARSE,
			"%s:%d: expected 'TOKEN admin', 'TOKEN "
			"team:NAME', 'TOKEN node:NAME', the first two "
			"with ' user:LOGIN' after",
			path, lineno);
	size_t len = strlen(tok);
	for (size_t i = 0; i < len; i++)
		if (!token_char(tok[i]))
			return gf_err_set(e, GF_EPARSE,
					  "%s:%d: a token holds only letters, "
					  "digits and ._~+/=-",
					  path, lineno);
	if (len < 16 || len > GF_AUTH_TOKEN_MAX)
		return gf_err_set(e, GF_EPARSE,
				  "%s:%d: a token is 16 to %d characters, this "
				  "one %zu",
				  path, lineno, GF_AUTH_TOKEN_MAX, len);
	if (a->n >= GF_AUTH_MAX_TOKENS)
		return gf_err_set(e, GF_ETOOBIG, "%s:%d: more than %d tokens",
				  path, lineno, GF_AUTH_MAX_TOKENS);
	struct gf_auth_entry *x = &a->e[a->n];
	memset(x, 0, sizeof(*x));
	if (!strcmp(role, "admin")) {
		x->admin = true;
	} else if (!strncmp(role, "team:", 5) && role[5] &&
		   strlen(role + 5) < sizeof(x->team)) {
		memcpy(x->team, role + 5, strlen(role + 5) + 1); /* fits */
	} else if (!strncmp(role, "node:", 5) && role[5] &&
		   strlen(role + 5) < sizeof(x->node)) {
		memcpy(x->node, role + 5, strlen(role + 5) + 1); /* fits */
	} else {
		return gf_err_set(e, GF_EPARSE,
				  "%s:%d: role '%.60s': expected admin, "
				  "team:NAME or node:NAME",
				  path, lineno, role);
	}
	if (user && (x->node[0] || strncmp(user, "user:", 5) ||
		     !gf_str_is_login(user + 5)))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%d: '%.60s': expected user:LOGIN after "
				  "admin or team:NAME, LOGIN 1 to %d letters, "
				  "digits, '_', '-' or '.'",
				  path, lineno, user, GF_AUTH_USER_MAX - 1);
	if (user)
		memcpy(x->user, user + 5, strlen(user + 5) + 1); /* fits */
	if (gf_auth_find(a, tok) != NULL)
		return gf_err_set(e, GF_EPARSE, "%s:%d: a token given twice",
				  path, lineno);
	if (gf_fmt(x->token, sizeof(x->token), "%s", tok) != 0)
		return gf_err_set(e, GF_EPARSE, "%s:%d: a token over %d bytes",
				  path, lineno, GF_AUTH_TOKEN_MAX);
	add_slot(a, a->n);
	a->n++;
	return 0;
}

int gf_auth_read(const char *path, struct gf_auth *a, struct gf_err *e)
{
	memset(a, 0, sizeof(*a));
	FILE *f = gf_file_open(path, "r", 1u << 20, e);
	if (!f)
		return e ? e->code : GF_EINVAL;
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
		a->loose_mode = true;
	a->e = gf_calloc(GF_AUTH_MAX_TOKENS, sizeof(*a->e));
	a->nslots = 2 * GF_AUTH_MAX_TOKENS;
	a->slot = gf_calloc((size_t)a->nslots, sizeof(*a->slot));
	a->hash = gf_calloc((size_t)a->nslots, sizeof(*a->hash));
	if (getrandom(a->key, sizeof(a->key), 0) != (ssize_t)sizeof(a->key)) {
		int rc = gf_err_set(e, -errno, "%s: no random key: %s", path,
				    gf_strerror(-errno));
		fclose(f);
		gf_auth_release(a);
		return rc;
	}
	char line[1024];
	int lineno = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		if (strlen(line) == sizeof(line) - 1 && !feof(f))
			rc = gf_err_set(e, GF_ETOOBIG,
					"%s:%d: line longer than %zu bytes",
					path, lineno, sizeof(line) - 2);
		else
			rc = parse_line(line, path, lineno, a, e);
	}
	fclose(f);
	if (rc == 0 && a->n == 0)
		rc = gf_err_set(e, GF_EPARSE, "%s: no token in the file", path);
	if (rc)
		gf_auth_release(a);
	return rc;
}

void gf_auth_release(struct gf_auth *a)
{
	if (a->e)
		memset(a->e, 0, sizeof(*a->e) * GF_AUTH_MAX_TOKENS);
	gf_free(a->e);
	gf_free(a->slot);
	gf_free(a->hash);
	memset(a, 0, sizeof(*a));
}

/* Equal, in time that depends only on the longer length. */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
	unsigned diff = (unsigned)(la ^ lb);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned)(unsigned char)(i < la ? a[i] : 0) ^
			(unsigned)(unsigned char)(i < lb ? b[i] : 0);
	return diff == 0;
}

const struct gf_auth_entry *gf_auth_find(const struct gf_auth *a,
					 const char *tok)
{
	size_t len = strlen(tok);
	if (len > GF_AUTH_TOKEN_MAX || a->nslots == 0)
		return NULL;
	uint64_t h = hash_of(a, tok, len);
	int mask = a->nslots - 1;
	for (int k = (int)(h & (uint64_t)mask); a->slot[k];
	     k = (k + 1) & mask) {
		const struct gf_auth_entry *x = &a->e[a->slot[k] - 1];
		if (a->hash[k] == h && same(x->token, tok))
			return x;
	}
	return NULL;
}

const struct gf_auth_entry *gf_auth_check(const struct gf_auth *a,
					  const char *header)
{
	if (header == NULL || strncmp(header, "Bearer ", 7) != 0)
		return NULL;
	const char *tok = header + 7;
	while (*tok == ' ')
		tok++;
	return gf_auth_find(a, tok);
}

const char *gf_auth_token_for(const struct gf_auth *a, bool admin,
			      const char *team)
{
	for (int i = 0; i < a->n; i++)
		if (admin ? a->e[i].admin
			  : (!a->e[i].admin && team && a->e[i].team[0] &&
			     !strcmp(a->e[i].team, team)))
			return a->e[i].token;
	return NULL;
}
