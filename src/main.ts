import 'reflect-metadata';
import { start } from './start.js';

void start();
