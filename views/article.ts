import { start } from './view.js';

// The article view (ui://reblog/article): an article, a writing job, the writer setup form.
start();
