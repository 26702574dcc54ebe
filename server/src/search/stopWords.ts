/**
 * Words that never count as a match between a ticket and an asset (glossary: Suggestion): common English
 * words, and the words every ticket uses whatever it is about. Only words of four or more letters
 * are listed, since shorter ones are never terms. Keep the list sorted; add a word when it shows up
 * as a reason for a suggestion that has nothing to do with the ticket.
 */
export const stopWords: ReadonlySet<string> = new Set([
	// Common English.
	'about', 'above', 'after', 'again', 'against', 'also', 'although', 'always', 'among', 'another', 'anything', 'around',
	'because', 'been', 'before', 'behind', 'being', 'below', 'between', 'both', 'cannot', 'could', 'does', 'doing', 'done',
	'down', 'during', 'each', 'either', 'else', 'enough', 'even', 'ever', 'every', 'everything', 'from', 'further', 'have',
	'having', 'here', 'hers', 'herself', 'himself', 'however', 'into', 'itself', 'just', 'know', 'less', 'like', 'many',
	'might', 'more', 'most', 'much', 'must', 'myself', 'neither', 'never', 'none', 'nothing', 'once', 'only', 'other',
	'others', 'ours', 'ourselves', 'over', 'perhaps', 'quite', 'rather', 'really', 'same', 'shall', 'should', 'since',
	'some', 'something', 'still', 'such', 'than', 'that', 'their', 'theirs', 'them', 'themselves', 'then', 'there',
	'these', 'they', 'thing', 'things', 'this', 'those', 'though', 'through', 'thus', 'together', 'too', 'under', 'until',
	'upon', 'very', 'want', 'wants', 'well', 'were', 'what', 'whatever', 'when', 'where', 'whether', 'which', 'while',
	'whom', 'whose', 'will', 'with', 'within', 'without', 'would', 'your', 'yours', 'yourself',
	// Words of tickets, whatever they are about.
	'able', 'actually', 'already', 'anyone', 'basically', 'better', 'change', 'changes', 'check', 'currently', 'description',
	'details', 'ensure', 'example', 'expected', 'feature', 'figure', 'files', 'first', 'following', 'good', 'help', 'implement',
	'improve', 'issue', 'issues', 'look', 'make', 'makes', 'making', 'maybe', 'need', 'needed', 'needs', 'new', 'next',
	'note', 'please', 'possible', 'problem', 'properly', 'should', 'simple', 'some', 'sure', 'task', 'tasks', 'thanks',
	'ticket', 'todo', 'update', 'updated', 'updates', 'used', 'uses', 'using', 'work', 'working', 'works',
]);
