/*
 * auth.h - the token file of `gpufleet serve --token-file F` (and of the
 * CLI clients): who a bearer token is.
 *
 *   # TOKEN ROLE
 *   3f9c0a1e5b7d2c4e8a6f0b1d9e3c5a7f  admin
 *   b2d4f6a8c0e1f3a5b7c9d1e3f5a7b9c1  team:vision
 *
 * An admin sees and changes everything; a team token submits, sees and
 * cancels only its own team's jobs.  Tokens are 16 to 256 characters of
 * [A-Za-z0-9._~+/=-]; compared in constant time.
 */
#ifndef GF_CONTROLLER_AUTH_H
#define GF_CONTROLLER_AUTH_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>

#define GF_AUTH_MAX_TOKENS 4096
#define GF_AUTH_TOKEN_MAX  256

struct gf_auth_entry {
	char token[GF_AUTH_TOKEN_MAX + 1];
	bool admin;
	char team[GF_TEAM_NAME_MAX]; /* when not admin */
};

struct gf_auth {
	struct gf_auth_entry *e;
	int n;
	bool loose_mode; /* the file is readable by group or others */
};

/* Read path: 0, or -errno / GF_EPARSE / GF_ETOOBIG with e->msg naming
 * file:line.  Release with gf_auth_release. */
int gf_auth_read(const char *path, struct gf_auth *a, struct gf_err *e);
void gf_auth_release(struct gf_auth *a);

/*
 * Who "Authorization: Bearer TOKEN" is: the entry, or NULL (a missing or
 * malformed header, an unknown token).  header may be NULL.
 */
const struct gf_auth_entry *gf_auth_check(const struct gf_auth *a,
					  const char *header);

/* The first token of the file with this role (admin, or the team), for
 * the CLI clients; NULL when none. */
const char *gf_auth_token_for(const struct gf_auth *a, bool admin,
			      const char *team);

#endif
