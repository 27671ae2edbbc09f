-- projects.find_owned
SELECT * FROM projects WHERE account_id = $1 AND id = ANY($2);
