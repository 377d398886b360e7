#include "core/burndown.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/model.h"
#include "core/util.h"

void bt_burndown_add(struct bt_burndown *b, const char *pattern, double factor)
{
    b->rules = bt_xrealloc(b->rules, (size_t)(b->n + 1) * sizeof *b->rules);
    bt_strlcpy(b->rules[b->n].pattern, pattern, sizeof b->rules[b->n].pattern);
    b->rules[b->n].factor = factor;
    b->n++;
}

static bool burndown_line(void *arg, char *pat, char *val, const char *name, int lineno,
                          char *err, size_t errlen)
{
    char *semi = strpbrk(val, ";#");
    if (semi) {
        *semi = '\0';
        val = bt_trim(val);
    }
    double f;
    if (!*pat || !bt_parse_double(val, &f) || f < 1 || f > 1000) {
        snprintf(err, errlen, "%s:%d: bad burndown factor '%s' (a number from 1 to 1000)", name,
                 lineno, val);
        return false;
    }
    bt_burndown_add(arg, pat, f);
    return true;
}

bool bt_burndown_parse(struct bt_burndown *b, const char *text, const char *name, char *err,
                       size_t errlen)
{
    return bt_parse_kv_lines(text, name, "model-pattern = factor", burndown_line, b, err, errlen);
}

bool bt_burndown_load_file(struct bt_burndown *b, const char *path, char *err, size_t errlen)
{
    return bt_parse_kv_file(path, "model-pattern = factor", burndown_line, b, err, errlen);
}


bool bt_burndown_load_default(struct bt_burndown *b, char *err, size_t errlen)
{
    char path[1200];
    if (!bt_data_path("burndown.conf", path, sizeof path)) {
        /* name where it was looked for last: the installed data directory */
        const char *env = getenv("BEDTOP_DATADIR");
        snprintf(err, errlen,
                 "burndown table: %s/burndown.conf: cannot be read (%s); set BEDTOP_DATADIR to "
                 "the directory holding burndown.conf, or reinstall bedtop",
                 env && *env ? env : BEDTOP_DATADIR, strerror(errno ? errno : ENOENT));
        return false;
    }
    if (!bt_burndown_load_file(b, path, err, errlen))
        return false;
    if (!b->n) {
        snprintf(err, errlen, "burndown table: %s: no rules (expected model-pattern = factor "
                 "lines); restore the file or reinstall bedtop", path);
        return false;
    }
    return true;
}

double bt_burndown_lookup(const struct bt_burndown *b, const char *model_id, bool *matched)
{
    const char *id = model_id + bt_profile_prefix_len(model_id);
    for (int i = b->n - 1; i >= 0; i--) {
        if (fnmatch(b->rules[i].pattern, id, 0) == 0 ||
            fnmatch(b->rules[i].pattern, model_id, 0) == 0) {
            if (matched)
                *matched = strcmp(b->rules[i].pattern, "*") != 0;
            return b->rules[i].factor;
        }
    }
    if (matched)
        *matched = false;
    return 1;
}

void bt_burndown_free(struct bt_burndown *b)
{
    free(b->rules);
    b->rules = NULL;
    b->n = 0;
}
