package seed

// The vocabulary of the sample data. Lists, not maps, so that generation is deterministic.

// courseTypes are the three allowed course types with their share of courses (out of 100).
var courseTypes = []struct {
	name  string
	share int
}{
	{"Brick and Mortar", 45},
	{"Online", 30},
	{"Blended", 25},
}

// subjects are what the courses teach.
var subjects = []string{
	"Welding", "Python", "Forklift Operation", "First Aid", "Bookkeeping", "Project Management",
	"Excel", "Electrical Wiring", "HVAC", "CNC Machining", "Phlebotomy", "CPR", "Network Security",
	"Cloud Computing", "Data Analysis", "Plumbing", "Carpentry", "Medical Billing", "Public Speaking",
	"Photography", "Graphic Design", "SQL", "JavaScript", "Commercial Driving", "OSHA Compliance",
	"Real Estate Licensing", "Notary Public", "Culinary Arts", "Pastry Baking", "Auto Body Repair",
	"Solar Panel Installation", "Drone Piloting", "Pharmacy Technician", "Dental Assisting",
	"Early Childhood Education", "Bartending", "Massage Therapy", "Small Engine Repair",
	"Accounting", "Leadership", "Customer Service", "Spanish for Healthcare", "Sign Language",
	"Food Safety", "Hazmat Handling", "Scaffolding", "Crane Operation", "Pipefitting",
	"Industrial Maintenance", "Cybersecurity", "Linux Administration", "Web Development",
	"Digital Marketing", "QuickBooks", "Payroll", "Home Inspection", "Pest Control",
	"Emergency Medical Response", "Nursing Assistant", "Veterinary Assisting",
}

// levels open a course name: "Intro to Python", "Advanced Welding".
var levels = []string{
	"Intro to", "Advanced", "Fundamentals of", "Applied", "Hands-On", "Essentials of",
	"Mastering", "Beginning", "Intermediate", "Professional", "Practical", "Certified",
}

// suffixes close a course name: "Welding Safety", "Excel Bootcamp".
var suffixes = []string{
	"Safety", "Certification", "Bootcamp", "Workshop", "Refresher", "Level 1", "Level 2",
	"for Beginners", "Lab", "Exam Prep", "Recertification", "Masterclass",
}

// oddNames are real-looking names that exercise the search's corner cases: %, _ and \ are
// literal characters (D11), lower-case first letters sort case-insensitively (D14), and
// non-ASCII letters.
var oddNames = []string{
	"Excel: 100% Hands-On", "snake_case Python Style", "iPhone Photography", "eBay Selling Basics",
	"C# for Beginners", "Résumé Writing", "Café Management", "Windows \\ Linux Dual Boot",
	"50% Off Your Energy Bill: Home Insulation", "AutoCAD 2D/3D", "ServSafe® Manager",
}

// schedules are the free-text schedules staff write on classes.
var schedules = []string{
	"Mon & Wed 6:00 PM - 9:00 PM", "Tue/Thu 5:30 PM - 8:30 PM", "Saturdays 8:00 AM - 4:00 PM",
	"Daily 8:30 AM - 3:30 PM", "Mon-Fri 7:00 AM - 3:30 PM", "Weekends, 9 AM - 1 PM",
	"Self-paced", "Fridays 1:00 PM - 5:00 PM", "Evenings (see syllabus)", "Sun 10:00 AM - 2:00 PM",
}

// costs are list prices in whole currency units.
var costs = []int32{49, 99, 149, 199, 249, 299, 349, 495, 595, 795, 995, 1295, 1495, 1995, 2495, 3495, 4995}

// seatLimits are the caps of capped classes; 0 is a class closed to registration.
var seatLimits = []int32{0, 1, 6, 8, 10, 12, 12, 15, 16, 18, 20, 20, 24, 25, 30, 40}

// cities are real cities with a plausible postal code.
var cities = []struct{ city, state, zip, country string }{
	{"Springfield", "IL", "62701", "United States"},
	{"Columbus", "OH", "43215", "United States"},
	{"Austin", "TX", "78701", "United States"},
	{"Houston", "TX", "77002", "United States"},
	{"Denver", "CO", "80202", "United States"},
	{"Phoenix", "AZ", "85004", "United States"},
	{"Portland", "OR", "97204", "United States"},
	{"Seattle", "WA", "98101", "United States"},
	{"Boise", "ID", "83702", "United States"},
	{"Omaha", "NE", "68102", "United States"},
	{"Tulsa", "OK", "74103", "United States"},
	{"Nashville", "TN", "37203", "United States"},
	{"Atlanta", "GA", "30303", "United States"},
	{"Charlotte", "NC", "28202", "United States"},
	{"Richmond", "VA", "23219", "United States"},
	{"Pittsburgh", "PA", "15222", "United States"},
	{"Albany", "NY", "12207", "United States"},
	{"Hartford", "CT", "06103", "United States"},
	{"Worcester", "MA", "01608", "United States"},
	{"Detroit", "MI", "48226", "United States"},
	{"Milwaukee", "WI", "53202", "United States"},
	{"Minneapolis", "MN", "55401", "United States"},
	{"Des Moines", "IA", "50309", "United States"},
	{"Kansas City", "MO", "64105", "United States"},
	{"Little Rock", "AR", "72201", "United States"},
	{"Baton Rouge", "LA", "70802", "United States"},
	{"Jacksonville", "FL", "32202", "United States"},
	{"Tampa", "FL", "33602", "United States"},
	{"Birmingham", "AL", "35203", "United States"},
	{"Salt Lake City", "UT", "84111", "United States"},
	{"Albuquerque", "NM", "87102", "United States"},
	{"Reno", "NV", "89501", "United States"},
	{"Sacramento", "CA", "95814", "United States"},
	{"Fresno", "CA", "93721", "United States"},
	{"Anchorage", "AK", "99501", "United States"},
	{"Honolulu", "HI", "96813", "United States"},
	{"Toronto", "ON", "M5V 2T6", "Canada"},
	{"Calgary", "AB", "T2P 1J9", "Canada"},
	{"Vancouver", "BC", "V6B 1A1", "Canada"},
	{"Halifax", "NS", "B3J 1S9", "Canada"},
}

// siteKinds name training sites: "Denver Training Center".
var siteKinds = []string{
	"Training Center", "Campus", "Learning Center", "Technical Institute", "Workforce Center",
	"Skills Lab", "Career Academy",
}

// roomKinds name rooms; a number follows.
var roomKinds = []string{"Room", "Lab", "Welding Bay", "Computer Lab", "Conference Room", "Shop", "Classroom"}

// outcomes fill the bullet lists of the HTML descriptions.
var outcomes = []string{
	"Understand the core concepts and vocabulary",
	"Practise on industry-standard equipment",
	"Prepare for the state certification exam",
	"Work safely and follow current regulations",
	"Complete a supervised hands-on project",
	"Read and interpret technical documentation",
	"Troubleshoot common problems in the field",
	"Earn continuing-education credits",
}
