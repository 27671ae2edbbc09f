// The DataSource the TypeORM CLI uses (npm run migration:generate); the app builds the same options.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source.js';

if (!process.env.DATABASE_URL) throw new Error('Set DATABASE_URL to use the TypeORM CLI.');

export default new DataSource(dataSourceOptions(process.env.DATABASE_URL));
