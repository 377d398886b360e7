#include "aws/sts.h"

#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

/* The elements we keep, by their path suffix; everything else is ignored. */
enum { E_NONE, E_AKID, E_SECRET, E_TOKEN, E_EXP, E_ARN, E_ACCOUNT, E_CODE, E_MESSAGE };

#define MAX_DEPTH 16
#define MAX_TEXT (16 * 1024)

struct xp {
    char path[MAX_DEPTH][48];
    int depth;
    int root;                  /* 0 unknown, 1 result, 2 ErrorResponse */
    int cur;                   /* element kind being read */
    struct bt_buf text;
    char *akid, *secret, *token, *exp;
    struct bt_sts_result *r;
    bool too_long;
};

static const char *local_name(const char *name)
{
    const char *sep = strrchr(name, '|'); /* namespace separator given to expat */
    return sep ? sep + 1 : name;
}

static int kind_of(const struct xp *x)
{
    if (x->depth < 2)
        return E_NONE;
    const char *leaf = x->path[x->depth - 1], *parent = x->path[x->depth - 2];
    if (x->root == 2)
        return strcmp(parent, "Error") ? E_NONE : !strcmp(leaf, "Code") ? E_CODE
             : !strcmp(leaf, "Message") ? E_MESSAGE : E_NONE;
    if (!strcmp(parent, "Credentials")) {
        if (!strcmp(leaf, "AccessKeyId"))
            return E_AKID;
        if (!strcmp(leaf, "SecretAccessKey"))
            return E_SECRET;
        if (!strcmp(leaf, "SessionToken"))
            return E_TOKEN;
        if (!strcmp(leaf, "Expiration"))
            return E_EXP;
    }
    if (!strcmp(leaf, "Arn") && (!strcmp(parent, "AssumedRoleUser") ||
                                 !strcmp(parent, "GetCallerIdentityResult")))
        return E_ARN;
    if (!strcmp(leaf, "Account") && !strcmp(parent, "GetCallerIdentityResult"))
        return E_ACCOUNT;
    return E_NONE;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    struct xp *x = ud;
    (void)attrs;
    const char *ln = local_name(name);
    if (x->depth == 0)
        x->root = !strcmp(ln, "ErrorResponse") ? 2 : 1;
    if (x->depth < MAX_DEPTH)
        bt_strlcpy(x->path[x->depth], ln, sizeof x->path[0]);
    x->depth++;
    x->cur = x->depth <= MAX_DEPTH ? kind_of(x) : E_NONE;
    bt_buf_reset(&x->text);
}

static void keep_str(char **slot, struct bt_buf *b)
{
    if (*slot) {
        OPENSSL_cleanse(*slot, strlen(*slot));
        free(*slot);
    }
    *slot = bt_xstrdup(bt_buf_str(b));
}

/* The element's text, trimmed (the buffer is ours to edit). */
static const char *text_of(struct bt_buf *b)
{
    bt_buf_str(b);
    return b->buf ? bt_trim(b->buf) : "";
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    struct xp *x = ud;
    (void)name;
    switch (x->cur) {
    case E_AKID: keep_str(&x->akid, &x->text); break;
    case E_SECRET: keep_str(&x->secret, &x->text); break;
    case E_TOKEN: keep_str(&x->token, &x->text); break;
    case E_EXP: keep_str(&x->exp, &x->text); break;
    case E_ARN: bt_strlcpy(x->r->arn, text_of(&x->text), sizeof x->r->arn); break;
    case E_ACCOUNT:
        bt_strlcpy(x->r->account, text_of(&x->text), sizeof x->r->account);
        break;
    case E_CODE: bt_strlcpy(x->r->code, text_of(&x->text), sizeof x->r->code); break;
    case E_MESSAGE:
        bt_strlcpy(x->r->message, text_of(&x->text), sizeof x->r->message);
        break;
    default: break;
    }
    if (x->text.buf)
        OPENSSL_cleanse(x->text.buf, x->text.len);
    bt_buf_reset(&x->text);
    x->cur = E_NONE;
    if (x->depth > 0)
        x->depth--;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    struct xp *x = ud;
    if (x->cur == E_NONE || len <= 0)
        return;
    if (x->text.len + (size_t)len > MAX_TEXT) {
        x->too_long = true;
        return;
    }
    bt_buf_add(&x->text, s, (size_t)len);
}

static void wipe(char **s)
{
    if (*s) {
        OPENSSL_cleanse(*s, strlen(*s));
        free(*s);
        *s = NULL;
    }
}

static void printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 32 || *s == 127)
            *s = ' ';
}

void bt_sts_result_clear(struct bt_sts_result *r)
{
    bt_creds_clear(&r->creds);
    memset(r, 0, sizeof *r);
}

int bt_sts_parse(const char *xml, size_t len, struct bt_sts_result *r)
{
    memset(r, 0, sizeof *r);
    if (!xml || len == 0 || len > 1024 * 1024) {
        bt_strlcpy(r->message, "empty or oversized answer", sizeof r->message);
        return -1;
    }
    XML_Parser p = XML_ParserCreateNS(NULL, '|');
    if (!p) {
        bt_strlcpy(r->message, "out of memory", sizeof r->message);
        return -1;
    }
    struct xp x;
    memset(&x, 0, sizeof x);
    x.r = r;
    XML_SetUserData(p, &x);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetCharacterDataHandler(p, on_text);
    int rc = -1;
    if (XML_Parse(p, xml, (int)len, 1) != XML_STATUS_OK) {
        snprintf(r->message, sizeof r->message, "not XML: %s at line %lu",
                 XML_ErrorString(XML_GetErrorCode(p)), (unsigned long)XML_GetCurrentLineNumber(p));
    } else if (x.too_long) {
        bt_strlcpy(r->message, "an element is longer than 16 KiB", sizeof r->message);
    } else if (x.root == 2) {
        printable(r->code);
        printable(r->message);
        if (!r->code[0])
            bt_strlcpy(r->code, "UnknownError", sizeof r->code);
        rc = 1;
    } else if (x.akid || x.secret) {
        int64_t exp = 0;
        if (!x.akid || !x.secret || !x.akid[0] || !x.secret[0]) {
            bt_strlcpy(r->message, "answer lacks AccessKeyId or SecretAccessKey", sizeof r->message);
        } else if (strlen(x.akid) >= sizeof r->creds.access_key ||
                   strlen(x.secret) >= sizeof r->creds.secret_key) {
            bt_strlcpy(r->message, "answer has an oversized key", sizeof r->message);
        } else if (x.exp && !bt_parse_iso(bt_trim(x.exp), &exp)) {
            bt_strlcpy(r->message, "Expiration is not an ISO 8601 time", sizeof r->message);
        } else {
            bt_strlcpy(r->creds.access_key, bt_trim(x.akid), sizeof r->creds.access_key);
            bt_strlcpy(r->creds.secret_key, bt_trim(x.secret), sizeof r->creds.secret_key);
            if (x.token && *bt_trim(x.token))
                r->creds.session_token = bt_xstrdup(bt_trim(x.token));
            r->creds.expiration = exp;
            rc = 0;
        }
    } else if (r->arn[0]) {
        rc = 0;
    } else {
        bt_strlcpy(r->message, "answer has neither credentials nor an error", sizeof r->message);
    }
    XML_ParserFree(p);
    wipe(&x.akid);
    wipe(&x.secret);
    wipe(&x.token);
    wipe(&x.exp);
    if (x.text.buf)
        OPENSSL_cleanse(x.text.buf, x.text.len);
    bt_buf_free(&x.text);
    if (rc != 0)
        bt_creds_clear(&r->creds);
    return rc;
}

void bt_form_add(struct bt_buf *b, const char *key, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    const char *parts[2] = {key, value};
    if (b->len)
        bt_buf_putc(b, '&');
    for (int i = 0; i < 2; i++) {
        for (const unsigned char *s = (const unsigned char *)parts[i]; *s; s++) {
            if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
                *s == '-' || *s == '_' || *s == '.' || *s == '~') {
                bt_buf_putc(b, (char)*s);
            } else {
                bt_buf_putc(b, '%');
                bt_buf_putc(b, hex[*s >> 4]);
                bt_buf_putc(b, hex[*s & 15]);
            }
        }
        if (i == 0)
            bt_buf_putc(b, '=');
    }
}

bool bt_arn_identity(const char *arn, char *account, size_t alen, char *role, size_t rlen)
{
    /* arn:PARTITION:SERVICE::ACCOUNT:RESOURCE */
    if (!arn || strncmp(arn, "arn:", 4) != 0)
        return false;
    const char *f[6];
    int nf = 0;
    f[nf++] = arn;
    for (const char *p = arn; *p && nf < 6; p++)
        if (*p == ':')
            f[nf++] = p + 1;
    if (nf < 6)
        return false;
    size_t al = (size_t)(f[5] - f[4] - 1);
    if (al != 12)
        return false;
    for (size_t i = 0; i < al; i++)
        if (f[4][i] < '0' || f[4][i] > '9')
            return false;
    const char *res = f[5];
    const char *name = NULL;
    if (strncmp(res, "assumed-role/", 13) == 0)
        name = res + 13;
    else if (strncmp(res, "role/", 5) == 0 || strncmp(res, "user/", 5) == 0)
        name = strrchr(res, '/') + 1;
    if (!name || !*name)
        return false;
    size_t nl = strcspn(name, "/");
    if (alen <= al || rlen <= 1)
        return false;
    memcpy(account, f[4], al);
    account[al] = '\0';
    if (nl >= rlen)
        nl = rlen - 1;
    memcpy(role, name, nl);
    role[nl] = '\0';
    for (char *c = role; *c; c++)
        if ((unsigned char)*c < 33 || *c == 127)
            *c = '?';
    return true;
}

void bt_sso_cache_name(const char *key, char *out, size_t n)
{
    unsigned char md[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)key, strlen(key), md);
    char hexs[2 * SHA_DIGEST_LENGTH + 1];
    for (int i = 0; i < SHA_DIGEST_LENGTH; i++)
        snprintf(hexs + 2 * i, 3, "%02x", md[i]);
    snprintf(out, n, "%s.json", hexs);
}
