/* AWS STS (query protocol: form-encoded POST, XML answers) and the pieces of IAM
 * Identity Center that credentials need. The XML is parsed with expat. Pure functions:
 * awsauth.c sends the requests. Nothing here prints a secret. */
#ifndef BEDTOP_STS_H
#define BEDTOP_STS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws/sigv4.h"
#include "core/util.h"

struct bt_sts_result {
    struct bt_creds creds;     /* AccessKeyId, SecretAccessKey, SessionToken, Expiration */
    char arn[256];             /* AssumedRoleUser/Arn (GetCallerIdentity: Arn) */
    char account[16];          /* GetCallerIdentity: Account */
    char code[64];             /* ErrorResponse/Error/Code */
    char message[256];         /* ErrorResponse/Error/Message, control characters replaced */
};

/* Parses an STS answer: AssumeRole/AssumeRoleWithWebIdentity/GetCallerIdentity result or an
 * ErrorResponse. Returns 0 with creds (or only arn for GetCallerIdentity), 1 for an
 * ErrorResponse (code, message), -1 when the text is not such XML (message says why).
 * r is zeroed first; bt_sts_result_clear wipes it. */
int bt_sts_parse(const char *xml, size_t len, struct bt_sts_result *r);
void bt_sts_result_clear(struct bt_sts_result *r);

/* Appends "&key=value" (no '&' first) form-encoded as STS expects (RFC 3986 unreserved kept). */
void bt_form_add(struct bt_buf *b, const char *key, const char *value);

/* "arn:aws:sts::123456789012:assumed-role/Role/session" -> account "123456789012", role "Role";
 * false when arn is not an assumed-role (or IAM role/user) ARN. */
bool bt_arn_identity(const char *arn, char *account, size_t alen, char *role, size_t rlen);

/* IAM Identity Center token cache file name: lowercase hex SHA-1 of the sso-session name (or of
 * the start URL for the legacy form) + ".json", as botocore's SSOTokenLoader. out >= 46 bytes. */
void bt_sso_cache_name(const char *key, char *out, size_t n);
#endif
