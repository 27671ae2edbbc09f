import { start } from './view.js';

// The articles view (ui://reblog/articles): a project's articles, each opening as an article.
start();
