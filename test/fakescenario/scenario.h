/*
 * The scenario file both fake driver libraries read (test/fakenvml,
 * test/fakecuda): one fact per line, "#" comments and blank lines skipped;
 * a line that starts with a number is about that device,
 *
 *   <key> <value...>         a fact of the driver
 *   <i> <key> <value...>     a fact of device i
 *
 * Header-only (static), so each library carries its own copy of the state.
 */
#ifndef GPU_PREFLIGHT_FAKE_SCENARIO_H
#define GPU_PREFLIGHT_FAKE_SCENARIO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCENARIO_MAX_FACTS 4096
#define SCENARIO_MAX_LINE 512

struct scenario_fact {
	int dev; /* -1 for driver facts */
	char key[32];
	char value[SCENARIO_MAX_LINE];
};

static struct scenario_fact scenario_facts[SCENARIO_MAX_FACTS];
static int scenario_nfacts;

/* scenario_load reads the file the variable env names; who names the
 * library in its complaints. It returns 0, or -1 when there is no file. */
static int scenario_load(const char *env, const char *who)
{
	const char *path = getenv(env);
	char line[SCENARIO_MAX_LINE * 2];
	FILE *f;

	if (path == NULL || *path == '\0') {
		fprintf(stderr, "%s: %s is not set\n", who, env);
		return -1;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "%s: cannot open scenario %s\n", who, path);
		return -1;
	}
	scenario_nfacts = 0;
	while (fgets(line, sizeof line, f) != NULL && scenario_nfacts < SCENARIO_MAX_FACTS) {
		struct scenario_fact *ft = &scenario_facts[scenario_nfacts];
		char *p = line, *key, *value;

		p[strcspn(p, "\r\n")] = '\0';
		if (*p == '#' || *p == '\0')
			continue;
		ft->dev = -1;
		if (*p >= '0' && *p <= '9') {
			ft->dev = (int)strtol(p, &p, 10);
			p += strspn(p, " ");
		}
		key = p;
		p += strcspn(p, " ");
		value = *p ? p + 1 : p;
		*p = '\0';
		snprintf(ft->key, sizeof ft->key, "%s", key);
		snprintf(ft->value, sizeof ft->value, "%s", value);
		scenario_nfacts++;
	}
	fclose(f);
	return 0;
}

/* scenario_lookup returns the value of key for dev (-1: the driver), or
 * NULL when the scenario does not say. */
static const char *scenario_lookup(int dev, const char *key)
{
	for (int i = 0; i < scenario_nfacts; i++)
		if (scenario_facts[i].dev == dev && strcmp(scenario_facts[i].key, key) == 0)
			return scenario_facts[i].value;
	return NULL;
}

#endif
