/** Style sheets the bundler gathers into app.css. */
declare module '*.css';
