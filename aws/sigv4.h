/* AWS Signature Version 4 (header form) on OpenSSL, checked against both AWS
 * test suites (tests/unit/test_sigv4.c). Credentials live here because the
 * signer is their one consumer; awsauth.c resolves them. */
#ifndef BEDTOP_SIGV4_H
#define BEDTOP_SIGV4_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_creds {
    char access_key[128];
    char secret_key[256];
    char *session_token;      /* heap, may be NULL; can be ~2 KB */
    int64_t expiration;       /* epoch s, 0 = does not expire */
    char source[128];         /* where it came from, e.g. "environment", "profile prod (~/.aws/credentials)" */
};
/* Frees session_token and wipes the secret (OPENSSL_cleanse); the struct is zeroed. */
void bt_creds_clear(struct bt_creds *c);
/* dst must be zeroed or hold creds (its old token is freed); dst == src is a no-op. */
void bt_creds_copy(struct bt_creds *dst, const struct bt_creds *src);

#include "net/header.h"   /* struct bt_header */

struct bt_sigv4_req {
    const char *method;                 /* "POST" */
    const char *path;                   /* raw path as sent, e.g. "/" */
    const char *query;                  /* raw query without '?', may be NULL */
    const struct bt_header *headers;    /* as sent, must include Host */
    size_t nheaders;
    const void *body; size_t body_len;
    const char *region; const char *service;  /* "monitoring", "servicequotas" */
    int64_t now;                        /* epoch seconds */
    bool normalize_path;                /* true for every service but S3 */
    bool omit_session_token;            /* sign without the token header (suite option) */
};

struct bt_sigv4_out {
    char amz_date[17];                  /* 20150830T123600Z: caller sends X-Amz-Date with it */
    char authorization[1024];           /* full Authorization header value */
    char signature[65];
    char *canonical_request;            /* heap, for tests */
    char *string_to_sign;               /* heap, for tests */
};

/* Signs: x-amz-date and (if creds->session_token and !omit) x-amz-security-token are added to the
 * signed headers automatically unless already present; the caller then sends X-Amz-Date and
 * X-Amz-Security-Token with the values above. When the caller already sends an X-Amz-Date
 * header, its value (not req->now) dates the signature and is copied to amz_date.
 * The path is URI-encoded once as given (so an already-encoded path is encoded again, as
 * every service but S3 expects); bedtop signs no S3 requests.
 * Returns 0 or -1 (bad input); on -1, out holds no heap memory. */
int bt_sigv4_sign(const struct bt_sigv4_req *req, const struct bt_creds *creds, struct bt_sigv4_out *out);
void bt_sigv4_out_free(struct bt_sigv4_out *out);

/* Lowercase hex SHA-256 of data (the payload hash; also for x-amz-content-sha256). */
void bt_sigv4_sha256_hex(const void *data, size_t len, char out[65]);
#endif
