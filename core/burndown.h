/* The burndown table: output-token multiplier by model-ID pattern. It lives in
 * a data file (data/burndown.conf) that config can extend; never a constant. */
#ifndef BEDTOP_BURNDOWN_H
#define BEDTOP_BURNDOWN_H
#include <stdbool.h>
#include <stddef.h>

struct bt_burndown_rule {
    char pattern[192];       /* fnmatch(3) glob against the model ID */
    double factor;
};

struct bt_burndown {
    struct bt_burndown_rule *rules; /* later rules win (user rules come after the data file) */
    int n;
};

/* Parses "pattern = factor" lines (# and ; comments). */
bool bt_burndown_parse(struct bt_burndown *b, const char *text, const char *name, char *err,
                       size_t errlen);
bool bt_burndown_load_file(struct bt_burndown *b, const char *path, char *err, size_t errlen);
/* Loads the installed table (BEDTOP_DATADIR, then ./data beside the binary). */
bool bt_burndown_load_default(struct bt_burndown *b, char *err, size_t errlen);
void bt_burndown_add(struct bt_burndown *b, const char *pattern, double factor);
/* Factor for a model ID; 1 when nothing matches (*matched false). The region
 * prefix of an inference profile (us., eu., global.) is ignored in matching. */
double bt_burndown_lookup(const struct bt_burndown *b, const char *model_id, bool *matched);
void bt_burndown_free(struct bt_burndown *b);
#endif
