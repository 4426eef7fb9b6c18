export { FnboxError } from './errors.js';
