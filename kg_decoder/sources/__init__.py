"""Where documents come from beyond a path: a web crawl (its pages feed the decode)."""
